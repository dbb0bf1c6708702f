// Transfers and refusals against the emulator: a truncated download is a transport failure
// (R-RR-1's retryable kind), never a short archive; 429 and 5xx are retried with backoff that
// honours Retry-After; a missing or rejected key is a clear error naming the variable only.
import { createWriteStream } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { classifyCopybackFailure } from "../../../src/copyback/merge/classify";
import { KEY_VARIABLE, useDaytona } from "./daytona-fixture";

const w = useDaytona();

describe("daytona provider: transport", { timeout: 60_000 }, () => {
  it("R-RR-1 a truncated export download fails the stream as transfer_dropped (retryable), and the next export is whole", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    await w().seed(a.handle, await w().tree({ "big.bin": Buffer.alloc(300_000, 3), "small.txt": "s" }));
    const whole = (await w().exportTree(a.handle)).manifest;
    emulator.faults.once({ op: "download", kind: "truncate", afterBytes: 100_000 });
    const dir = await w().scratch();
    const error = await pipeline(await provider.exportWorkspace!(a.handle), createWriteStream(join(dir, "short.tar"))).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ kind: "unavailable", code: "transfer_dropped" });
    expect(classifyCopybackFailure(error)).toEqual({ retryable: true, reason: "transfer_dropped" });
    expect((await w().exportTree(a.handle)).manifest).toEqual(whole);
    // The sandbox keeps no archive once a transfer settled.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await readdir(join(a.sandboxDir, "copyback/control/transfers"))).toEqual([]);
  });

  it("R-RR-1 a download cut 3 bytes into its answer (the client sees the connection reset before any response) is transfer_dropped, not provider_daytona_unreachable", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    emulator.faults.once({ op: "download", kind: "truncate", afterBytes: 3 });
    const error = await provider.exportWorkspace!(a.handle).then(
      async (stream) => {
        for await (const chunk of stream) void chunk;
        return null;
      },
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ kind: "unavailable", code: "transfer_dropped" });
    expect(classifyCopybackFailure(error)).toEqual({ retryable: true, reason: "transfer_dropped" });
  });

  it("R-RR-1 a download that breaks off (lost reply) is a transport failure too", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    emulator.faults.once({ op: "download", kind: "lost_reply" });
    const error = await provider.exportWorkspace!(a.handle).then(
      async (stream) => {
        for await (const chunk of stream) void chunk;
        return null;
      },
      (e: unknown) => e,
    );
    expect(classifyCopybackFailure(error)).toEqual({ retryable: true, reason: "transfer_dropped" });
    expect((error as { code?: string }).code).toBe("transfer_dropped");
  });

  it("R-RR-1 an export aborted by the caller's deadline stops with the caller's reason", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    emulator.faults.once({ op: "download", kind: "hang" });
    const controller = new AbortController();
    const deadline = new Error("deadline");
    setTimeout(() => controller.abort(deadline), 300);
    await expect(provider.exportWorkspace!(a.handle, { signal: controller.signal })).rejects.toBe(deadline);
  });

  it("429 with Retry-After is retried after the wait Daytona asked for", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    emulator.faults.once({ op: "get", kind: "rate_limit", retryAfterSeconds: 1 });
    const started = Date.now();
    expect(await provider.inspect!(a.handle)).toMatchObject({ state: "running" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(emulator.faults.pending()).toEqual([]);
    // 5xx too, and a download's 429 before any byte.
    emulator.faults.once({ op: "get", kind: "status", status: 502 });
    emulator.faults.once({ op: "download", kind: "rate_limit", retryAfterSeconds: 0 });
    expect((await w().exportTree(a.handle)).manifest.entries).toEqual([]);
  });

  it("a Retry-After longer than the policy waits gives up at once with a retryable provider error", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    emulator.faults.once({ op: "get", kind: "rate_limit", retryAfterSeconds: 3_600 });
    const started = Date.now();
    await expect(provider.inspect!(a.handle)).rejects.toMatchObject({ kind: "unavailable", code: "provider_daytona_unavailable", details: { status: 429 } });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("a missing key is a clear error naming the variable; nothing is created", async () => {
    const { provider, emulator, variables } = w();
    variables.delete(KEY_VARIABLE);
    const error = await w().acquire().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "provider_credentials_missing", details: { variable: KEY_VARIABLE } });
    expect((error as Error).message).toContain(KEY_VARIABLE);
    expect(emulator.sandboxes.list()).toEqual([]);
    void provider;
  });

  it("a rejected key (401) is a clear error naming the variable, never the key", async () => {
    const { provider, emulator, variables } = w();
    const a = await w().acquire();
    variables.set(KEY_VARIABLE, "dtn_wrong_key_0123");
    for (const call of [() => w().acquire(), () => provider.inspect!(a.handle), () => provider.stopLease!(a.handle, { requestId: "s" })]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "provider_credentials_rejected", details: { variable: KEY_VARIABLE, status: 401 } });
      expect(JSON.stringify({ message: (error as Error).message, details: (error as { details?: unknown }).details })).not.toContain("dtn_wrong_key");
    }
    expect(emulator.sandboxes.list()).toHaveLength(1);
    expect(emulator.sandbox(a.sandboxId).state).toBe("started");
  });
});
