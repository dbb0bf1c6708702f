// The Daytona provider's sandbox-side rules against the emulator: the R-DT-2 sentinel, the
// agent's exec (timeout, abort, cwd, quoting), exclusions, and bad input that changes nothing.
import { randomUUID } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { SandboxSentinel } from "../../../src/providers/types";
import { manifestOf, useDaytona } from "./daytona-fixture";

const w = useDaytona();

/** Whether a process whose command line holds `marker` runs on this machine (the emulator runs them here). */
async function running(marker: string): Promise<boolean> {
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(marker)) return true;
  }
  return false;
}

const sentinelFor = (a: { handle: { leaseId: string; providerLeaseId: string }; fingerprint: string; runId: string }): SandboxSentinel => ({
  schema: "copyback.workspace-sentinel.v1",
  runId: a.runId,
  leaseId: a.handle.leaseId,
  providerLeaseId: a.handle.providerLeaseId,
  allocationFingerprint: a.fingerprint,
  nonce: "ab".repeat(32),
  createdAt: new Date().toISOString(),
});

describe("daytona provider: the sandbox", { timeout: 60_000 }, () => {
  it("R-DT-2 the sentinel is written once outside the exported tree, survives a seed and a stop, and is read back; none is a legacy allocation", async () => {
    const { provider } = w();
    const a = await w().acquire();
    expect(await provider.readWorkspaceSentinel!(a.handle)).toBeNull();
    const sentinel = sentinelFor(a);
    await provider.writeWorkspaceSentinel!(a.handle, sentinel);
    await expect(provider.writeWorkspaceSentinel!(a.handle, { ...sentinel, nonce: "cd".repeat(32) })).rejects.toMatchObject({ code: "provider_sentinel_exists" });
    await expect(provider.writeWorkspaceSentinel!(a.handle, { ...sentinel, leaseId: "another" })).rejects.toMatchObject({ code: "provider_sentinel_invalid" });
    // A seed carrying a file of the sentinel's name puts it in the workspace, never over the sentinel.
    await w().seed(a.handle, await w().tree({ "copyback/sentinel.json": "{}", "sentinel.json": "{}" }));
    expect((await w().exportTree(a.handle)).manifest.entries.map((e) => e.path)).toEqual(["copyback", "copyback/sentinel.json", "sentinel.json"]);
    expect(await provider.stopLease!(a.handle, { requestId: "s" })).toMatchObject({ confirmed: true });
    await provider.resume!(a.handle, { providerLeaseId: a.handle.providerLeaseId, fingerprint: a.fingerprint });
    expect(await provider.readWorkspaceSentinel!(a.handle)).toEqual(sentinel);
    // A sentinel someone rewrote into garbage is refused, never read as "none".
    await writeFile(join(a.sandboxDir, "copyback/sentinel.json"), "not json");
    await expect(provider.readWorkspaceSentinel!(a.handle)).rejects.toMatchObject({ code: "provider_sandbox_record_invalid" });
  });

  it("the same lease acquiring again gets its own sandbox back; another owner's sandbox of that name is refused", async () => {
    const { provider, emulator, config } = w();
    const a = await w().acquire();
    const again = await provider.acquire!({ companyId: "company-1", environmentId: "env-1", leaseId: a.handle.leaseId, runId: a.runId, config: config() });
    expect(again.identity).toEqual({ providerLeaseId: a.handle.providerLeaseId, fingerprint: a.fingerprint });
    await expect(provider.acquire!({ companyId: "company-2", environmentId: "env-1", leaseId: a.handle.leaseId, runId: a.runId, config: config() })).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    expect(emulator.sandboxes.list()).toHaveLength(1);
    // A handle of another lease never reaches this sandbox.
    const stranger = { ...a.handle, leaseId: `lease-${randomUUID()}` };
    expect(await provider.inspect!(stranger)).toMatchObject({ state: "unknown", identity: null });
    await expect(provider.destroy!(stranger)).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    await expect(provider.stopLease!(stranger, { requestId: "s" })).rejects.toMatchObject({ code: "provider_sandbox_foreign" });
    expect(emulator.sandbox(a.sandboxId).state).toBe("started");
  });

  it("resume refuses a sandbox that is not the one that was stopped", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    await provider.stopLease!(a.handle, { requestId: "s" });
    await expect(provider.resume!(a.handle, { providerLeaseId: a.handle.providerLeaseId, fingerprint: "daytona:other" })).rejects.toMatchObject({ code: "provider_identity_mismatch" });
    expect(emulator.sandbox(a.sandboxId).state).toBe("stopped");
  });

  it("exec: argv is quoted, not interpreted; cwd and variables apply; a timeout and an abort kill the agent", async () => {
    const a = await w().acquire();
    await w().seed(a.handle, await w().tree({ "sub/": "" }));
    const quoted = await w().exec(a.handle, ["sh", "-c", 'printf "%s|%s|%s" "$1" "$PWD" "$GREETING" > out.txt', "arg", "$(touch pwned) 'x'"], { cwd: "sub", env: { GREETING: "it's me" } });
    expect(quoted.result.exitCode).toBe(0);
    const out = await readFile(join(a.workspaceDir, "sub/out.txt"), "utf8");
    expect(out).toBe(`$(touch pwned) 'x'|${join(a.workspaceDir, "sub")}|it's me`);
    expect((await manifestOf(a.workspaceDir)).entries.map((e) => e.path)).toEqual(["sub", "sub/out.txt"]);

    const started = Date.now();
    const slow = await w().exec(a.handle, ["sh", "-c", "echo begun; sleep 31.25; echo never > never.txt"], { timeoutMs: 700 });
    expect(slow.result).toMatchObject({ timedOut: true, exitCode: null, resultFile: null });
    expect(Date.now() - started).toBeLessThan(15_000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 400);
    const aborted = await w().exec(a.handle, ["sleep", "32.75"], { signal: controller.signal });
    expect(aborted.result).toMatchObject({ cancelled: true, exitCode: null });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await running("31.25")).toBe(false);
    expect(await running("32.75")).toBe(false);
    await expect(readFile(join(a.workspaceDir, "never.txt"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a seed or an input placement is refused while the agent still runs, and works once it stopped", async () => {
    const { provider } = w();
    const a = await w().acquire();
    await w().seed(a.handle, await w().tree({ "kept.txt": "kept" }));
    const controller = new AbortController();
    let started!: () => void;
    const begun = new Promise<void>((resolve) => (started = resolve));
    const agent = provider.exec!(a.handle, { argv: ["sleep", "33.5"], env: {}, timeoutMs: 20_000, signal: controller.signal, onStart: () => started() });
    await begun;
    await expect(w().seed(a.handle, await w().tree({ "other.txt": "x" }))).rejects.toMatchObject({ code: "provider_sandbox_busy" });
    await expect(provider.placeInputs!(a.handle, [{ relativePath: "c.md", render: () => Buffer.from("c") }])).rejects.toMatchObject({ code: "provider_sandbox_busy" });
    expect(await readFile(join(a.workspaceDir, "kept.txt"), "utf8")).toBe("kept");
    controller.abort();
    expect(await agent).toMatchObject({ cancelled: true });
    await w().seed(a.handle, await w().tree({ "other.txt": "x" }));
    expect(await readFile(join(a.workspaceDir, "other.txt"), "utf8")).toBe("x");
  });

  it("exec: an output stream that drops is completed from the stored logs, with the real exit code", async () => {
    const a = await w().acquire();
    w().emulator.faults.once({ op: "session-logs-follow", kind: "lost_reply" });
    const { result, output } = await w().exec(a.handle, ["sh", "-c", "echo one; sleep 0.5; echo two >&2; exit 7"]);
    expect(result).toMatchObject({ exitCode: 7, timedOut: false });
    expect(output.filter(([s]) => s === "stdout").map(([, c]) => c).join("")).toBe("one\n");
    expect(output.filter(([s]) => s === "stderr").map(([, c]) => c).join("")).toBe("two\n");
    expect(w().emulator.faults.pending()).toEqual([]);
  });

  it("exec refuses bad input before anything runs", async () => {
    const { provider } = w();
    const a = await w().acquire();
    const request = { env: {}, timeoutMs: 1_000 };
    await expect(provider.exec!(a.handle, { ...request, argv: [] })).rejects.toMatchObject({ code: "exec_argv_invalid" });
    await expect(provider.exec!(a.handle, { ...request, argv: ["true"], cwd: "../.." })).rejects.toMatchObject({ code: "exec_cwd_invalid" });
    await expect(provider.exec!(a.handle, { ...request, argv: ["true"], env: { "BAD NAME": "x" } })).rejects.toMatchObject({ code: "exec_env_invalid" });
    await provider.stopLease!(a.handle, { requestId: "s" });
    await expect(provider.exec!(a.handle, { ...request, argv: ["true"] })).rejects.toMatchObject({ code: "provider_sandbox_stopped" });
  });

  it("exports leave exclusions out entirely (names at any depth, anchored paths)", async () => {
    const a = await w().acquire();
    await w().seed(a.handle, await w().tree({ "a/node_modules/x.js": "x", "node_modules/y.js": "y", "build/out.o": "o", "src/build/keep.c": "k", "keep.txt": "k" }));
    const { manifest } = await w().exportTree(a.handle, ["node_modules", "./build"]);
    expect(manifest.entries.map((e) => e.path)).toEqual(["a", "keep.txt", "src", "src/build", "src/build/keep.c"]);
  });

  it("an unsafe seed archive is refused and changes nothing in the sandbox", async () => {
    const { provider } = w();
    const a = await w().acquire();
    await w().seed(a.handle, await w().tree({ "kept.txt": "kept" }));
    const header = Buffer.alloc(512);
    header.write("../escape.txt", 0);
    header.write("0000644\0", 100);
    header.write("0000000\0", 108);
    header.write("0000000\0", 116);
    header.write("00000000001\0", 124);
    header.write("00000000000\0", 136);
    header.write("0", 156);
    header.write("ustar\0", 257);
    header.write("00", 263);
    header.fill(" ", 148, 156);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    const body = Buffer.concat([header, Buffer.from("x"), Buffer.alloc(511), Buffer.alloc(1024)]);
    await expect(provider.seedWorkspace!(a.handle, Readable.from([body]))).rejects.toMatchObject({ code: "provider_seed_archive_unsafe" });
    expect(await readFile(join(a.workspaceDir, "kept.txt"), "utf8")).toBe("kept");
  });
});
