import { describe, expect, it } from "vitest";
import { createFakeProvider } from "./fake-provider";
import { parseFakeConfig } from "./config";

const acquireWith = (config: unknown, leaseId: string) => ({ companyId: "c1", environmentId: "e1", leaseId, runId: `run-${leaseId}`, config });

describe("fake provider faults from the environment's config", () => {
  it("is off by default: an empty config arms nothing and exec exits 0 without changes", async () => {
    const provider = createFakeProvider();
    const allocation = await provider.acquire!(acquireWith({}, "l0"));
    const handle = { leaseId: "l0", pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
    const result = await provider.exec!(handle, { argv: ["x"], env: {}, timeoutMs: 1_000 });
    expect(result).toMatchObject({ exitCode: 0, resultFile: null });
    expect(parseFakeConfig(undefined)).toEqual({});
  });

  it("arms fail, loseReply, hang and unconfirmedStop per lease, and the scripted turn fills {runId}", async () => {
    const provider = createFakeProvider();
    const config = {
      faults: { fail: { exportWorkspace: 2 }, loseReply: { destroy: 1 }, hang: { inspect: 1 }, unconfirmedStop: 1 },
      turn: { resultFile: '{"run":"{runId}"}', files: { "a/{runId}.txt": "token={runId}" } },
    };
    const allocation = await provider.acquire!(acquireWith(config, "l1"));
    const handle = { leaseId: "l1", pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
    const result = await provider.exec!(handle, { argv: ["x"], env: { COPYBACK_RUN_ID: "R1" }, timeoutMs: 1_000 });
    expect(result.resultFile).toBe('{"run":"R1"}');
    expect(provider.store.get(handle.providerLeaseId)?.workspace.get("a/R1.txt")).toMatchObject({ kind: "file" });
    await expect(provider.exportWorkspace!(handle)).rejects.toMatchObject({ code: "provider_fault_injected" });
    await expect(provider.exportWorkspace!(handle)).rejects.toMatchObject({ code: "provider_fault_injected" });
    await expect(provider.exportWorkspace!(handle)).resolves.toBeDefined();
    const hung = provider.inspect!(handle);
    const raced = await Promise.race([hung.then(() => "settled"), new Promise((r) => setTimeout(() => r("hung"), 50))]);
    expect(raced).toBe("hung");
    expect((await provider.stopLease!(handle, { requestId: "s1" })).confirmed).toBe(false);
    expect((await provider.stopLease!(handle, { requestId: "s2" })).confirmed).toBe(true);
    await expect(provider.destroy!(handle)).rejects.toMatchObject({ code: "provider_reply_lost" });

    // Another lease of an environment without faults is not affected.
    const other = await provider.acquire!(acquireWith({}, "l2"));
    await expect(provider.exportWorkspace!({ leaseId: "l2", pluginId: provider.pluginId, providerLeaseId: other.identity.providerLeaseId })).resolves.toBeDefined();
  });

  it("R-EX-5 rehearsal faults: resumeReplyLost loses the resume's reply after it took effect; probeFailure fails inspect and the sentinel read", async () => {
    const provider = createFakeProvider();
    const allocation = await provider.acquire!(acquireWith({ faults: { resumeReplyLost: 1, probeFailure: 1 } }, "l5"));
    const handle = { leaseId: "l5", pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
    // Before the first stop nothing fails (a run's own preparation inspects its sandbox).
    expect((await provider.inspect!(handle)).state).toBe("running");
    expect((await provider.stopLease!(handle, { requestId: "s" })).confirmed).toBe(true);
    await expect(provider.inspect!(handle)).rejects.toMatchObject({ code: "provider_fault_injected" });
    await expect(provider.readWorkspaceSentinel!(handle)).rejects.toMatchObject({ code: "provider_fault_injected" });
    expect(await provider.readWorkspaceSentinel!(handle)).toBeNull();
    expect((await provider.inspect!(handle)).state).toBe("stopped");
    await expect(provider.resume!(handle, allocation.identity)).rejects.toMatchObject({ code: "provider_reply_lost" });
    // It did resume: the reply was what got lost.
    expect((await provider.inspect!(handle)).state).toBe("running");
    await expect(provider.resume!(handle, allocation.identity)).resolves.toEqual(allocation.identity);
    await expect(provider.acquire!(acquireWith({ faults: { probeFailure: 0 } }, "l6"))).rejects.toMatchObject({ code: "provider_config_invalid" });
  });

  it("refuses a malformed faults object with provider_config_invalid", async () => {
    const provider = createFakeProvider();
    await expect(provider.acquire!(acquireWith({ faults: { fail: { nope: 1 } } }, "l3"))).rejects.toMatchObject({ code: "provider_config_invalid" });
    await expect(provider.acquire!(acquireWith({ faults: { fail: { exec: 0 } } }, "l4"))).rejects.toMatchObject({ code: "provider_config_invalid" });
  });
});
