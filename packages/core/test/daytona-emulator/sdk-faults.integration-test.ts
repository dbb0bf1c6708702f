// Each emulator fault kind, observed through the real @daytonaio/sdk.
import { describe, expect, it } from "vitest";
import { useHarness } from "./sdk-harness";

const h = useHarness();

describe("Daytona emulator faults through the SDK", () => {
  it("a lost reply: the stop took effect although the call threw", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    h().emulator.faults.once({ op: "stop", kind: "lost_reply" });
    await expect(sandbox.stop()).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 60));
    await sandbox.refreshData();
    expect(sandbox.state).toBe("stopped");
  });

  it("a truncated download is detected, never returned as a short file", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    await sandbox.fs.uploadFile(Buffer.alloc(50_000, 7), "big.bin");
    h().emulator.faults.once({ op: "download", kind: "truncate", afterBytes: 10_000 });
    await expect(sandbox.fs.downloadFile("big.bin")).rejects.toThrow();
    expect((await sandbox.fs.downloadFile("big.bin")).length).toBe(50_000);
  });

  it("a truncated streamed download errors the stream", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    await sandbox.fs.uploadFile(Buffer.alloc(200_000, 1), "big.bin");
    h().emulator.faults.once({ op: "download", kind: "truncate", afterBytes: 100_000 });
    const read = async () => {
      const stream = await sandbox.fs.downloadFileStream("big.bin");
      let total = 0;
      for await (const chunk of stream) total += (chunk as Buffer).length;
      return total;
    };
    const outcome = await read().then((total) => total, (error: unknown) => error);
    expect(outcome).not.toBe(200_000);
  });

  it("429 surfaces with its Retry-After", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    h().emulator.faults.once({ op: "get", kind: "rate_limit", retryAfterSeconds: 7 });
    const error = (await h().daytona.get(sandbox.id).catch((e: unknown) => e)) as { statusCode?: number; headers?: Record<string, unknown> };
    expect(error.statusCode).toBe(429);
    expect(String(error.headers?.["retry-after"])).toBe("7");
    expect((await h().daytona.get(sandbox.id)).id).toBe(sandbox.id);
  });

  it("an injected status code answers once, scoped to one sandbox", async () => {
    const a = await h().daytona.create({ labels: {} });
    const b = await h().daytona.create({ labels: {} });
    h().emulator.faults.once({ op: "get", kind: "status", status: 503, sandboxId: b.id });
    expect((await h().daytona.get(a.id)).id).toBe(a.id);
    await expect(h().daytona.get(b.id)).rejects.toMatchObject({ statusCode: 503 });
    expect((await h().daytona.get(b.id)).id).toBe(b.id);
  });

  it("a hang holds the call until released, or until the client times out", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    h().emulator.faults.once({ op: "get", kind: "hang" });
    const pending = h().daytona.get(sandbox.id);
    await new Promise((r) => setTimeout(r, 100));
    h().emulator.faults.releaseHangs();
    expect((await pending).id).toBe(sandbox.id);
    h().emulator.faults.once({ op: "get", kind: "hang" });
    await expect(h().client(h().emulator.apiKey, 300).get(sandbox.id)).rejects.toThrow(/timeout/i);
  });

  it("a stop that never confirms stays stopping; the SDK's wait times out", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    h().emulator.faults.once({ op: "stop", kind: "never_confirms" });
    await expect(sandbox.stop(1)).rejects.toThrow(/stopped within the timeout/);
    await sandbox.refreshData();
    expect(sandbox.state).toBe("stopping");
    await expect(sandbox.start()).rejects.toMatchObject({ statusCode: 409 });
  });

  it("an ignored setting answers success and changes nothing", async () => {
    const sandbox = await h().daytona.create({ labels: {}, autoDeleteInterval: 30 });
    h().emulator.faults.once({ op: "autodelete", kind: "ignored" });
    await sandbox.setAutoDeleteInterval(-1);
    await sandbox.refreshData();
    expect(sandbox.autoDeleteInterval).toBe(30);
    await sandbox.setAutoDeleteInterval(-1);
    await sandbox.refreshData();
    expect(sandbox.autoDeleteInterval).toBe(-1);
  });

  it("archived and auto-deleted behind the controller's back", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    await sandbox.stop();
    h().emulator.archiveBehindBack(sandbox.id);
    await sandbox.refreshData();
    expect(sandbox.state).toBe("archived");
    h().emulator.deleteBehindBack(sandbox.id);
    await expect(sandbox.refreshData()).rejects.toMatchObject({ statusCode: 404 });
  });
});
