import { describe, expect, it } from "vitest";
import type { EnvironmentProvider, LeaseHandle } from "./types";
import { metrics } from "../metrics/definitions";
import { instrumentProvider } from "./instrument-provider";

class PrivatePlugin implements EnvironmentProvider {
  readonly pluginId = "test.private";
  readonly provider = "fake" as const;
  readonly capabilities = new Set(["destroy", "inspect"] as const);
  #destroyed = 0;
  get destroyed(): number {
    return this.#destroyed;
  }
  async destroy(_lease: LeaseHandle): Promise<void> {
    this.#destroyed += 1;
  }
  async inspect(_lease: LeaseHandle): Promise<never> {
    throw Object.assign(new Error("gone"), { code: "provider_sandbox_missing" });
  }
  faults(): string {
    return "not an operation";
  }
}

const lease = { leaseId: "l", pluginId: "test.private", providerLeaseId: "p" };
const value = async (name: "copyback_provider_calls_total" | "copyback_provider_call_failures_total", labels: Record<string, string>) => {
  const metric = name === "copyback_provider_calls_total" ? metrics.providerCalls : metrics.providerCallFailures;
  return (await metric.get()).values.filter((v) => Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x)).reduce((a, v) => a + v.value, 0);
};

describe("instrumentProvider", () => {
  it("counts calls and failures by plugin and operation; private fields, getters and other methods keep working uncounted", async () => {
    const plugin = new PrivatePlugin();
    const wrapped = instrumentProvider(plugin);
    const calls = await value("copyback_provider_calls_total", { plugin: "test.private", operation: "destroy" });
    await wrapped.destroy(lease);
    expect(plugin.destroyed).toBe(1);
    expect(wrapped.destroyed).toBe(1);
    expect(await value("copyback_provider_calls_total", { plugin: "test.private", operation: "destroy" })).toBe(calls + 1);
    await expect(wrapped.inspect!(lease)).rejects.toThrow("gone");
    expect(await value("copyback_provider_call_failures_total", { plugin: "test.private", operation: "inspect", code: "provider_sandbox_missing" })).toBe(1);
    expect(wrapped.faults()).toBe("not an operation");
    expect(await value("copyback_provider_calls_total", { plugin: "test.private", operation: "faults" })).toBe(0);
    expect(wrapped.capabilities).toBe(plugin.capabilities);
  });
});
