// The local provider's acquisition (acquire-sandbox.ts, local-sandboxes.ts): a private sandbox
// per lease, never another lease's or another plugin's directory; and R-DT-2's sentinel written
// into a new sandbox (workspace-sentinel.ts).
import { lstat, mkdir, readdir, readFile, stat, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLocalProvider } from "../../../src/providers/local/local-provider";
import { ISOLATIONS, localProviderSetup, nextLeaseId, scratchDirectory } from "./local-provider-fixture";

const scratch = await scratchDirectory();

// Real processes on a small, busy machine: generous limits, no timed assertions.
describe.each(ISOLATIONS)("local provider (isolation %s)", { timeout: 30_000 }, (isolation) => {
  const { instanceRoot, provider, expectIsolated, acquired } = localProviderSetup(scratch, isolation);

  it("acquires a private sandbox directory with its own identity; the same lease gets it back", async () => {
    const { p, allocation, handle, root, workspace } = await acquired();
    expect(allocation.isolated).toBe(expectIsolated);
    expect(handle.providerLeaseId).toBe(`local-${handle.leaseId}`);
    expect((await stat(root)).mode & 0o777).toBe(0o700);
    expect((await stat(workspace)).mode & 0o777).toBe(0o700);
    const ws = await stat(workspace, { bigint: true });
    expect(allocation.identity.fingerprint).toMatch(new RegExp(`^${ws.dev}:${ws.ino}:${ws.birthtimeNs}:[0-9a-f]{32}$`));
    const again = await p.acquire!({ companyId: "c", environmentId: "e", leaseId: handle.leaseId, runId: `run-${handle.leaseId}`, config: {} });
    expect(again.identity).toEqual(allocation.identity);
    expect(await p.inspect!(handle)).toMatchObject({ state: "running", identity: allocation.identity, processes: [] });
  });

  it("never takes over a directory that another lease (or nobody) owns", async () => {
    const { p, handle, root } = await acquired();
    await expect(p.acquire!({ companyId: "c", environmentId: "other", leaseId: handle.leaseId, runId: "run-x", config: {} })).rejects.toMatchObject({
      code: "provider_sandbox_foreign",
    });
    const squatted = nextLeaseId();
    await mkdir(join(instanceRoot, "sandboxes", `local-${squatted}`));
    await expect(p.acquire!({ companyId: "c", environmentId: "e", leaseId: squatted, runId: "r", config: {} })).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    const outside = join(scratch, `outside-${isolation}`);
    await mkdir(outside, { recursive: true });
    const linked = nextLeaseId();
    await symlink(outside, join(instanceRoot, "sandboxes", `local-${linked}`));
    await expect(p.acquire!({ companyId: "c", environmentId: "e", leaseId: linked, runId: "r", config: {} })).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    const linkedHandle = { leaseId: linked, pluginId: "builtin.local", providerLeaseId: `local-${linked}` };
    await expect(p.destroy!(linkedHandle)).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    expect((await lstat(outside)).isDirectory()).toBe(true);
    expect((await readFile(join(root, "control", "identity.json"), "utf8")).includes(handle.leaseId)).toBe(true);
  });

  it("refuses a bad lease id or configuration and creates nothing", async () => {
    const p = provider();
    await expect(p.acquire!({ companyId: "c", environmentId: "e", leaseId: "../x", runId: "r", config: {} })).rejects.toMatchObject({ code: "provider_lease_id_invalid" });
    const leaseId = nextLeaseId();
    await expect(p.acquire!({ companyId: "c", environmentId: "e", leaseId, runId: "r", config: { allowNetwork: "yes" } })).rejects.toMatchObject({
      code: "provider_config_invalid",
    });
    expect(await readdir(join(instanceRoot, "sandboxes"))).not.toContain(`local-${leaseId}`);
  });

  it("R-DT-2 the sentinel is written once next to the workspace, never exported, and read back; none is a legacy allocation", async () => {
    const { p, allocation, handle, root, workspace } = await acquired();
    expect(await p.readWorkspaceSentinel!(handle)).toBeNull();
    const sentinel = {
      schema: "copyback.workspace-sentinel.v1" as const,
      runId: `run-${handle.leaseId}`,
      leaseId: handle.leaseId,
      providerLeaseId: handle.providerLeaseId,
      allocationFingerprint: allocation.identity.fingerprint,
      nonce: "ab".repeat(32),
      createdAt: new Date().toISOString(),
    };
    await p.writeWorkspaceSentinel!(handle, sentinel);
    expect(await p.readWorkspaceSentinel!(handle)).toEqual(sentinel);
    expect(JSON.parse(await readFile(join(root, "sentinel.json"), "utf8"))).toEqual(sentinel);
    await expect(p.writeWorkspaceSentinel!(handle, { ...sentinel, nonce: "cd".repeat(32) })).rejects.toMatchObject({ code: "provider_sentinel_exists" });
    await expect(p.writeWorkspaceSentinel!(handle, { ...sentinel, leaseId: "other" })).rejects.toMatchObject({ code: "provider_sentinel_invalid" });
    // Outside the exported tree: the workspace does not hold it.
    expect(await readdir(workspace)).toEqual([]);
  });

  it("R-EX-6 another local plugin on the same instance root cannot use this plugin's sandbox", async () => {
    const { handle, root } = await acquired();
    const other = createLocalProvider({ instanceRoot, isolation, pluginId: "acme.local" });
    const asOther = { ...handle, pluginId: "acme.local" };
    await expect(other.inspect!(asOther)).resolves.toMatchObject({ state: "unknown", identity: null });
    await expect(other.stopLease!(asOther, { requestId: "x" })).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    await expect(other.destroy!(asOther)).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    await expect(other.acquire!({ companyId: "c", environmentId: "e", leaseId: handle.leaseId, runId: `run-${handle.leaseId}`, config: {} })).rejects.toMatchObject({
      code: "provider_sandbox_foreign",
    });
    expect((await lstat(root)).isDirectory()).toBe(true);
  });

  it("refuses a lease handle of another plugin or naming another sandbox", async () => {
    const { p, handle } = await acquired();
    await expect(p.inspect!({ ...handle, pluginId: "acme.local" })).rejects.toMatchObject({ code: "provider_plugin_mismatch" });
    await expect(p.exec!({ ...handle, providerLeaseId: "local-other" }, { argv: ["true"], env: {}, timeoutMs: 1000 })).rejects.toMatchObject({
      code: "provider_identity_mismatch",
    });
  });
});
