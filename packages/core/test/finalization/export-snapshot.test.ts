// exportSnapshot through the built-in providers' real exports (no database): the local provider
// with a real sandbox directory, the fake one with its virtual workspace. The workspace's
// exclusions reach both exports (primary and salvage), the local primary export carries
// hard-linked files as bytes, and the export policy's verdicts are what finalization gets.
import { link, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ArchiveLimitError } from "../../src/copyback/archive/errors";
import { exportSnapshot } from "../../src/finalization/export-snapshot";
import { createFakeProvider } from "../../src/providers/fake/fake-provider";
import { createLocalProvider } from "../../src/providers/local/local-provider";
import type { EnvironmentProvider, LeaseHandle } from "../../src/providers/types";

const scratch = await mkdtemp(join(tmpdir(), "copyback-export-snapshot-"));
afterAll(async () => rm(scratch, { recursive: true, force: true }));
let counter = 0;

async function localSandbox() {
  const provider = createLocalProvider({ instanceRoot: join(scratch, "instance"), isolation: "none" });
  const leaseId = `lease-${++counter}`;
  const allocation = await provider.acquire!({ companyId: "c", environmentId: "e", leaseId, runId: `run-${leaseId}`, config: {} });
  const handle: LeaseHandle = { leaseId, pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
  return { provider, handle, workspace: join(scratch, "instance", "sandboxes", handle.providerLeaseId, "workspace") };
}

/** Wraps a provider so the test sees every call's exclusions. */
function recording(provider: EnvironmentProvider) {
  const calls: { call: string; exclude: readonly string[] | undefined }[] = [];
  const wrapped: EnvironmentProvider = {
    pluginId: provider.pluginId,
    provider: provider.provider,
    capabilities: provider.capabilities,
    exportWorkspace: (lease, opts) => {
      calls.push({ call: "export", exclude: opts?.exclude });
      return provider.exportWorkspace!(lease, opts);
    },
    salvageExport: (lease, opts) => {
      calls.push({ call: "salvage", exclude: opts?.exclude });
      return provider.salvageExport!(lease, opts);
    },
  };
  return { wrapped, calls };
}

async function snapshot(plugin: EnvironmentProvider, lease: LeaseHandle, exclude?: string[]) {
  const workDir = await mkdtemp(join(scratch, "work-"));
  const infos: string[] = [];
  const result = await exportSnapshot({ plugin, lease, workDir, exclude, info: async (code) => void infos.push(code) });
  return { result, infos, workDir };
}

describe("exportSnapshot with the built-in providers", () => {
  it("R-UA-2: local provider: excluded trees (absolute and escaping links, a virtualenv) are neither exported nor validated; the primary export is extracted with no salvage", async () => {
    const { provider, handle, workspace } = await localSandbox();
    await mkdir(join(workspace, "src"));
    await writeFile(join(workspace, "src/app.ts"), "app");
    await mkdir(join(workspace, "node_modules/.bin"), { recursive: true });
    await symlink("/usr/lib/node_modules/tool/cli.js", join(workspace, "node_modules/.bin/tool"));
    await symlink("../../../../etc", join(workspace, "node_modules/escape"));
    await mkdir(join(workspace, "sub/.venv/bin"), { recursive: true });
    await symlink("/usr/bin/python3", join(workspace, "sub/.venv/bin/python"));
    const { wrapped, calls } = recording(provider);

    const { result, infos } = await snapshot(wrapped, handle, ["node_modules", ".venv"]);
    expect(result).toMatchObject({ kind: "extracted", stage: "primary" });
    expect(calls).toEqual([{ call: "export", exclude: ["node_modules", ".venv"] }]);
    expect(infos).toEqual([]);
    if (result.kind === "extracted") {
      expect((await readdir(result.snapshotDir)).sort()).toEqual(["src", "sub"]);
      expect(await readdir(join(result.snapshotDir, "sub"))).toEqual([]);
      expect(result.snapshotManifest.entries.map((e) => e.path)).toEqual(["src", "src/app.ts", "sub"]);
    }

    // Without the exclusions the same sandbox needs the salvage export, which drops the links.
    const again = recording(provider);
    const unexcluded = await snapshot(again.wrapped, handle);
    expect(unexcluded.result).toMatchObject({ kind: "extracted", stage: "salvage" });
    expect(again.calls.map((c) => c.call)).toEqual(["export", "salvage"]);
  });

  it("R-UA-2: local provider: the salvage export gets the exclusions too (an excluded tree never reaches the host through it)", async () => {
    const { provider, handle, workspace } = await localSandbox();
    await writeFile(join(workspace, "kept.txt"), "kept");
    await symlink("/etc/passwd", join(workspace, "unsafe"));
    await mkdir(join(workspace, "cache"));
    await writeFile(join(workspace, "cache/blob"), "excluded");
    const { wrapped, calls } = recording(provider);
    const { result, infos } = await snapshot(wrapped, handle, ["cache"]);
    expect(result).toMatchObject({ kind: "extracted", stage: "salvage" });
    expect(calls).toEqual([
      { call: "export", exclude: ["cache"] },
      { call: "salvage", exclude: ["cache"] },
    ]);
    expect(infos).toEqual(["workspace.export_salvaged"]);
    if (result.kind === "extracted") expect((await readdir(result.snapshotDir)).sort()).toEqual(["kept.txt"]);
  });

  it("R-UA-2: local provider: hard-linked files travel as ordinary bytes in the primary export; no salvage is needed", async () => {
    const { provider, handle, workspace } = await localSandbox();
    await mkdir(join(workspace, "store"));
    await writeFile(join(workspace, "store/pkg.js"), "shared bytes");
    await mkdir(join(workspace, "app"));
    await link(join(workspace, "store/pkg.js"), join(workspace, "app/pkg.js"));
    await link(join(workspace, "store/pkg.js"), join(workspace, "app/again.js"));
    const { wrapped, calls } = recording(provider);
    const { result } = await snapshot(wrapped, handle);
    expect(result).toMatchObject({ kind: "extracted", stage: "primary", entries: 5 });
    expect(calls.map((c) => c.call)).toEqual(["export"]);
    if (result.kind === "extracted") {
      for (const path of ["store/pkg.js", "app/pkg.js", "app/again.js"]) expect(await readFile(join(result.snapshotDir, path), "utf8")).toBe("shared bytes");
    }
  });

  it("R-UA-3: local provider: colliding paths are a limit failure, not an omission (the salvage cannot help, so it is not asked for)", async () => {
    const { provider, handle, workspace } = await localSandbox();
    await writeFile(join(workspace, "Makefile"), "a");
    await writeFile(join(workspace, "makefile"), "b");
    const { wrapped, calls } = recording(provider);
    const error = await snapshot(wrapped, handle).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArchiveLimitError);
    expect((error as ArchiveLimitError).limitViolation).toMatchObject({ code: "case_collision" });
    expect(calls.map((c) => c.call)).toEqual(["export"]);
  });

  it("R-UA-2: fake provider: the exclusions reach its export and its salvage export", async () => {
    const provider = createFakeProvider({ script: () => ({ files: { "a.txt": "a", "node_modules/x.js": "x", "node_modules/abs": { symlink: "/etc" }, bad: { symlink: "/etc/passwd" } } }) });
    const leaseId = `fake-${++counter}`;
    const allocation = await provider.acquire!({ companyId: "c", environmentId: "e", leaseId, runId: "r", config: {} });
    const handle: LeaseHandle = { leaseId, pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
    await provider.exec!(handle, { argv: ["agent"], env: {}, timeoutMs: 1000 });
    const { wrapped, calls } = recording(provider);
    const { result } = await snapshot(wrapped, handle, ["node_modules"]);
    expect(result).toMatchObject({ kind: "extracted", stage: "salvage" });
    expect(calls).toEqual([
      { call: "export", exclude: ["node_modules"] },
      { call: "salvage", exclude: ["node_modules"] },
    ]);
    if (result.kind === "extracted") expect(await readdir(result.snapshotDir)).toEqual(["a.txt"]);
  });
});
