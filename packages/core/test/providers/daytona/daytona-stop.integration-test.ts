// R-DT-1 and R-DT-4 against the emulator: the stop that keeps a sandbox's files never happens
// while Daytona could still delete it, and an archive Daytona made on its own counts as stopped
// once auto-delete is confirmed off.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { preserveFromAutoDelete } from "../../../src/leases/auto-delete-preservation";
import { hasCapability } from "../../../src/providers/registry";
import { useDaytona } from "./daytona-fixture";

const w = useDaytona();
const settle = () => new Promise((resolve) => setTimeout(resolve, 80));

describe("daytona provider: stop-only preservation", { timeout: 60_000 }, () => {
  it("R-DT-1 an auto-delete disable Daytona does not apply refuses the stop: the sandbox is neither stopped nor deleted", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire({ autoDeleteMinutes: 30 });
    await w().seed(a.handle, await w().tree({ "keep.txt": "precious" }));
    emulator.faults.once({ op: "autodelete", kind: "ignored" });
    await expect(provider.stopLease!(a.handle, { requestId: "stop-1" })).rejects.toMatchObject({ kind: "unavailable", code: "provider_auto_delete_unconfirmed" });
    const record = emulator.sandbox(a.sandboxId);
    expect(record.state).toBe("started");
    expect(record.autoDeleteInterval).toBe(30);
    expect(await readFile(join(a.workspaceDir, "keep.txt"), "utf8")).toBe("precious");
    expect(emulator.faults.pending()).toEqual([]);
  });

  it("R-DT-1 the lease layer's read-back sees the unapplied disable as unconfirmed (cleanup stays pending), and a confirmed one as confirmed", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire({ autoDeleteMinutes: 30 });
    if (!hasCapability(provider, "autoDeletePolicy")) throw new Error("the daytona plugin must offer autoDeletePolicy");
    emulator.faults.once({ op: "autodelete", kind: "ignored" });
    expect(await preserveFromAutoDelete(provider, a.handle)).toMatchObject({ kind: "pending", code: "auto_delete_unconfirmed" });
    expect(await provider.readAutoDeletePolicy(a.handle)).toEqual({ autoDelete: "enabled" });
    // Daytona failing the call (503 every time: the backoff gives up) is a failure, not a confirmation.
    for (let i = 0; i < 4; i++) emulator.faults.once({ op: "autodelete", kind: "status", status: 503 });
    expect(await preserveFromAutoDelete(provider, a.handle)).toMatchObject({ kind: "pending", code: "auto_delete_failed" });
    expect(emulator.sandbox(a.sandboxId).state).toBe("started");
    expect(await preserveFromAutoDelete(provider, a.handle)).toEqual({ kind: "confirmed" });
    expect(emulator.sandbox(a.sandboxId).autoDeleteInterval).toBe(-1);
  });

  it("R-DT-1 a stop Daytona never confirms answers an unconfirmed receipt; nothing is deleted", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire({ autoDeleteMinutes: 0 });
    emulator.faults.once({ op: "stop", kind: "never_confirms" });
    const receipt = await provider.stopLease!(a.handle, { requestId: "stop-2" });
    expect(receipt).toMatchObject({ confirmed: false, requestId: "stop-2", method: "environmentStopLease" });
    const record = emulator.sandbox(a.sandboxId);
    expect(record.state).toBe("stopping");
    expect(record.autoDeleteInterval).toBe(-1);
  });

  it("R-DT-1 a stop whose reply was lost is read back: confirmed once Daytona's record says stopped", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    emulator.faults.once({ op: "stop", kind: "lost_reply" });
    expect(await provider.stopLease!(a.handle, { requestId: "stop-3" })).toMatchObject({ confirmed: true });
    expect(emulator.sandbox(a.sandboxId).state).toBe("stopped");
    // Stopping again (a retried cleanup) confirms again without moving anything.
    expect(await provider.stopLease!(a.handle, { requestId: "stop-4" })).toMatchObject({ confirmed: true, requestId: "stop-4" });
  });

  it("R-DT-4 a sandbox Daytona archived on its own counts as stopped with auto-delete disabled; its files are kept and resume brings them back", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    await w().seed(a.handle, await w().tree({ "work/a.txt": "alpha\n", "b.bin": Buffer.alloc(70_000, 5) }));
    const before = (await w().exportTree(a.handle)).manifest;
    expect(await provider.stopLease!(a.handle, { requestId: "stop-1" })).toMatchObject({ confirmed: true });
    emulator.archiveBehindBack(a.sandboxId);
    const receipt = await provider.stopLease!(a.handle, { requestId: "stop-2" });
    expect(receipt).toMatchObject({ confirmed: true, requestId: "stop-2" });
    expect(emulator.sandbox(a.sandboxId).state).toBe("archived");
    expect(await provider.inspect!(a.handle)).toMatchObject({ state: "stopped", remote: { state: "archived", autoDelete: "disabled" } });
    await provider.resume!(a.handle, { providerLeaseId: a.handle.providerLeaseId, fingerprint: a.fingerprint });
    expect((await w().exportTree(a.handle)).manifest).toEqual(before);
  });

  it("R-DT-4 an archived sandbox whose auto-delete is still on is accepted only once its disable is read back", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire({ autoDeleteMinutes: 600 });
    const record = emulator.sandbox(a.sandboxId);
    emulator.sandboxes.act(record, "stop");
    await settle();
    emulator.archiveBehindBack(a.sandboxId);
    emulator.faults.once({ op: "autodelete", kind: "ignored" });
    await expect(provider.stopLease!(a.handle, { requestId: "stop-1" })).rejects.toMatchObject({ code: "provider_auto_delete_unconfirmed" });
    expect(record.state).toBe("archived");
    expect(await provider.stopLease!(a.handle, { requestId: "stop-2" })).toMatchObject({ confirmed: true });
    expect([record.state, record.autoDeleteInterval]).toEqual(["archived", -1]);
  });

  it("R-DT-4 a sandbox Daytona deleted is never reported stopped: the stop fails as missing", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    await provider.stopLease!(a.handle, { requestId: "stop-1" });
    emulator.deleteBehindBack(a.sandboxId);
    await expect(provider.stopLease!(a.handle, { requestId: "stop-2" })).rejects.toMatchObject({ code: "provider_sandbox_missing" });
    expect(await provider.inspect!(a.handle)).toMatchObject({ state: "missing", identity: null });
  });
});
