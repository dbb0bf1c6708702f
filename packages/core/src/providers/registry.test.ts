import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createDefaultRegistry } from "./default-registry";
import { createFakeProvider } from "./fake/fake-provider";
import { ProviderRegistry, requireCapability } from "./registry";

function registryWith(...pluginIds: string[]) {
  const registry = new ProviderRegistry();
  const plugins = pluginIds.map((pluginId) => createFakeProvider({ pluginId }));
  for (const plugin of plugins) registry.register(plugin);
  return { registry, plugins };
}

describe("ProviderRegistry", () => {
  it("R-EX-6 the plugin id pinned on a lease selects exactly that plugin", () => {
    const { registry, plugins } = registryWith("builtin.fake", "acme.fake");
    expect(registry.forLease({ pluginId: "acme.fake", provider: "fake" })).toBe(plugins[1]);
    expect(registry.forLease({ pluginId: "builtin.fake", provider: "fake" })).toBe(plugins[0]);
  });

  it("R-EX-6 another plugin with the same provider name cannot take over a missing plugin's lease", () => {
    const { registry } = registryWith("acme.fake");
    expect(() => registry.forLease({ pluginId: "builtin.fake", provider: "fake" })).toThrow(
      expect.objectContaining({ kind: "unavailable", code: "provider_plugin_unavailable" }),
    );
  });

  it("R-EX-6 a missing plugin reads provider_plugin_unavailable (callers defer without spending an attempt)", () => {
    const registry = new ProviderRegistry();
    let caught: unknown;
    try {
      registry.forLease({ pluginId: "builtin.local", provider: "local" });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ name: "DomainError", kind: "unavailable", code: "provider_plugin_unavailable", details: { pluginId: "builtin.local" } });
  });

  it("R-EX-6 a pinned plugin that serves another provider is refused, not used", () => {
    const { registry } = registryWith("builtin.local");
    expect(() => registry.forLease({ pluginId: "builtin.local", provider: "local" })).toThrow(
      expect.objectContaining({ kind: "conflict", code: "provider_plugin_mismatch" }),
    );
  });

  it("R-EX-6 requireCapability refuses a capability the plugin does not advertise", () => {
    const registry = new ProviderRegistry();
    const older = createFakeProvider({ pluginId: "old.fake", capabilities: ["acquire", "exec", "exportWorkspace", "destroy", "inspect"] });
    registry.register(older);
    expect(() => registry.requireCapability(older, "environmentStopLease")).toThrow(
      expect.objectContaining({ code: "provider_capability_missing", details: { pluginId: "old.fake", capability: "environmentStopLease" } }),
    );
    expect(() => requireCapability(older, "resume")).toThrow(expect.objectContaining({ code: "provider_capability_missing" }));
    expect(() => requireCapability(older, "destroy")).not.toThrow();
  });

  it("R-EX-6 a capability advertised without its operation is refused too", () => {
    const plugin = { ...createFakeProvider(), stopLease: undefined };
    expect(() => requireCapability(plugin, "environmentStopLease")).toThrow(expect.objectContaining({ code: "provider_capability_missing" }));
  });

  it("refuses a second plugin with the same id and keeps the first", () => {
    const { registry, plugins } = registryWith("builtin.fake");
    expect(() => registry.register(createFakeProvider())).toThrow(expect.objectContaining({ code: "provider_plugin_duplicate" }));
    expect(registry.get("builtin.fake")).toBe(plugins[0]);
    expect(registry.list()).toHaveLength(1);
  });
});

describe("createDefaultRegistry", () => {
  it("R-EX-6 registers builtin.local, builtin.fake and builtin.daytona (never an emulator), each for its own leases", async () => {
    const root = await mkdtemp(join(tmpdir(), "copyback-registry-"));
    try {
      const registry = createDefaultRegistry({ instanceRoot: root });
      const local = registry.forLease({ pluginId: "builtin.local", provider: "local" });
      const fake = registry.forLease({ pluginId: "builtin.fake", provider: "fake" });
      expect([local.provider, fake.provider]).toEqual(["local", "fake"]);
      for (const plugin of [local, fake]) registry.requireCapability(plugin, "environmentStopLease");
      expect(() => registry.forLease({ pluginId: "builtin.local", provider: "fake" })).toThrow(expect.objectContaining({ code: "provider_plugin_mismatch" }));
      // R-DT-1: the Daytona plugin stops only through environmentStopLease after its auto-delete read-back.
      const daytona = registry.forLease({ pluginId: "builtin.daytona", provider: "daytona" });
      registry.requireCapability(daytona, "environmentStopLease");
      registry.requireCapability(daytona, "autoDeletePolicy");
      registry.requireCapability(daytona, "workspaceSentinel");
      expect(registry.list().map((p) => p.pluginId)).toEqual(["builtin.local", "builtin.fake", "builtin.daytona"]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
