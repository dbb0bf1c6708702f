import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterAll, describe, expect, it } from "vitest";
import { exportWorkspaceArchive } from "../../copyback/archive/export";
import { extractValidatedArchive } from "../../copyback/archive/extract";
import { encodeHeader } from "../../copyback/archive/tar-header";
import { ProviderRegistry } from "../registry";
import type { AcquireRequest, ExecRequest, LeaseHandle } from "../types";
import { createFakeProvider } from "./fake-provider";
import { FakeFaults } from "./faults";
import { workspaceTar } from "./virtual-workspace";

const scratch = mkdtemp(join(tmpdir(), "copyback-fake-"));
afterAll(async () => rm(await scratch, { recursive: true, force: true }));

let counter = 0;
function request(): AcquireRequest {
  counter += 1;
  return { companyId: "c1", environmentId: "e1", leaseId: `lease-${counter}`, runId: `run-${counter}`, config: {} };
}
const handleOf = (pluginId: string, leaseId: string, providerLeaseId: string): LeaseHandle => ({ pluginId, leaseId, providerLeaseId });
const execRequest = (extra: Partial<ExecRequest> = {}): ExecRequest => ({ argv: ["agent"], env: {}, timeoutMs: 60_000, ...extra });

async function acquired(provider = createFakeProvider()) {
  const req = request();
  const allocation = await provider.acquire!(req);
  return { provider, allocation, handle: handleOf(provider.pluginId, req.leaseId, allocation.identity.providerLeaseId) };
}

async function saveArchive(stream: Readable, name: string): Promise<string> {
  const file = join(await scratch, `${name}.tar`);
  await pipeline(stream, createWriteStream(file));
  return file;
}

describe("fake provider", () => {
  it("R-SO-3 stops through its own stopLease with receipt method builtin.stopLease, pinned to the built-in plugin", async () => {
    const registry = new ProviderRegistry();
    registry.register(createFakeProvider());
    const provider = registry.forLease({ pluginId: "builtin.fake", provider: "fake" });
    expect(provider.capabilities.has("environmentStopLease")).toBe(true);
    registry.requireCapability(provider, "environmentStopLease");
    const { handle } = await acquired(provider as ReturnType<typeof createFakeProvider>);
    const receipt = await provider.stopLease!(handle, { requestId: "stop-1" });
    expect(receipt).toMatchObject({
      method: "builtin.stopLease",
      requestId: "stop-1",
      pluginId: "builtin.fake",
      providerLeaseId: handle.providerLeaseId,
      confirmed: true,
    });
    expect((await provider.inspect!(handle)).state).toBe("stopped");
  });

  it("R-SO-3 an unconfirmed stop answers confirmed:false and leaves the sandbox running", async () => {
    const { provider, handle } = await acquired();
    provider.faults.unconfirmedStop(1);
    expect((await provider.stopLease!(handle, { requestId: "s" })).confirmed).toBe(false);
    expect((await provider.inspect!(handle)).state).toBe("running");
    expect((await provider.stopLease!(handle, { requestId: "s2" })).confirmed).toBe(true);
  });

  it("R-SO-3 without environmentStopLease advertised, the capability check refuses the stop", async () => {
    const provider = createFakeProvider({ capabilities: ["acquire", "exec", "inspect"] });
    expect(() => new ProviderRegistry().requireCapability(provider, "environmentStopLease")).toThrow(
      expect.objectContaining({ code: "provider_capability_missing" }),
    );
  });

  it("a stopped sandbox survives a controller restart (shared store) and resumes only with the same identity", async () => {
    const { provider, allocation, handle } = await acquired();
    await provider.stopLease!(handle, { requestId: "s" });
    const restarted = createFakeProvider({ store: provider.store });
    expect((await restarted.inspect!(handle)).state).toBe("stopped");
    await expect(restarted.resume!(handle, { ...allocation.identity, fingerprint: "fake:other" })).rejects.toMatchObject({ code: "provider_identity_mismatch" });
    expect((await restarted.inspect!(handle)).state).toBe("stopped");
    expect(await restarted.resume!(handle, allocation.identity)).toEqual(allocation.identity);
    expect((await restarted.inspect!(handle)).state).toBe("running");
  });

  it("exec runs the script: output, exit code, result file and workspace changes", async () => {
    const provider = createFakeProvider({
      script: ({ request: r }) => ({
        exitCode: 3,
        stdout: `ran ${r.argv.join(" ")}`,
        resultFile: '{"outcome":"done"}',
        files: { "a/b.txt": "hello", "link": { symlink: "a/b.txt" } },
      }),
    });
    const { handle } = await acquired(provider);
    const output: string[] = [];
    let started: unknown = "not called";
    const result = await provider.exec!(handle, execRequest({ onOutput: (s, c) => output.push(`${s}:${c}`), onStart: (p) => void (started = p) }));
    expect(result).toMatchObject({ exitCode: 3, resultFile: '{"outcome":"done"}', timedOut: false, cancelled: false, process: null });
    expect(output).toEqual(["stdout:ran agent"]);
    expect(started).toBeNull();
    expect([...provider.store.get(handle.providerLeaseId)!.workspace.keys()].sort()).toEqual(["a/b.txt", "link"]);
  });

  it("exec times out or is cancelled when the script does not finish", async () => {
    const provider = createFakeProvider({ script: () => new Promise(() => {}) });
    const { handle } = await acquired(provider);
    expect(await provider.exec!(handle, execRequest({ timeoutMs: 5 }))).toMatchObject({ timedOut: true, exitCode: null });
    const abort = new AbortController();
    const running = provider.exec!(handle, execRequest({ signal: abort.signal }));
    abort.abort();
    expect(await running).toMatchObject({ cancelled: true, timedOut: false });
  });

  it("exports a real tar stream that copyback validates and extracts", async () => {
    const provider = createFakeProvider({ script: () => ({ files: { "src/x.ts": "x", "src-b/y": "y", "src/deep/z": Buffer.from([0, 1, 2]), "ln": { symlink: "src/x.ts" } } }) });
    const { handle } = await acquired(provider);
    await provider.exec!(handle, execRequest());
    const excluded = await saveArchive(await provider.exportWorkspace!(handle, { exclude: ["deep", "src-b"] }), "excluded");
    const rest = join(await scratch, "rest");
    await mkdir(rest);
    await extractValidatedArchive(excluded, rest);
    expect((await readdir(rest)).sort()).toEqual(["ln", "src"]);
    expect((await readdir(join(rest, "src"))).sort()).toEqual(["x.ts"]);
    const file = await saveArchive(await provider.exportWorkspace!(handle), "export");
    const dest = join(await scratch, "extracted");
    await mkdir(dest);
    const safe = await extractValidatedArchive(file, dest);
    expect(safe.kind).toBe("safe");
    expect(await readFile(join(dest, "src/x.ts"), "utf8")).toBe("x");
    expect(await readFile(join(dest, "src/deep/z"))).toEqual(Buffer.from([0, 1, 2]));
    expect(await readlink(join(dest, "ln"))).toBe("src/x.ts");
  });

  it("salvage export leaves links out and carries the fixed message", async () => {
    const provider = createFakeProvider({ script: () => ({ files: { f: "1", bad: { symlink: "/etc/passwd" } } }) });
    const { handle } = await acquired(provider);
    await provider.exec!(handle, execRequest());
    const { archive, message } = await provider.salvageExport!(handle);
    expect(message).toBe("The workspace export contained unsafe links; a second export omitted them.");
    const second = createFakeProvider();
    const target = await acquired(second);
    await second.seedWorkspace!(target.handle, archive);
    expect([...second.store.get(target.handle.providerLeaseId)!.workspace.keys()]).toEqual(["f"]);
  });

  it("seeds a workspace from a tar stream, replacing its contents; an unsafe archive changes nothing", async () => {
    const { provider, handle } = await acquired();
    const source = new Map([["d/f.txt", { kind: "file" as const, content: Buffer.from("seed"), mode: 0o644 }]]);
    await provider.seedWorkspace!(handle, Readable.from([workspaceTar(source)]));
    const workspace = provider.store.get(handle.providerLeaseId)!.workspace;
    expect(workspace.get("d/f.txt")).toMatchObject({ kind: "file", content: Buffer.from("seed") });
    workspace.set("leftover", { kind: "file", content: Buffer.from("old"), mode: 0o644 });
    await provider.seedWorkspace!(handle, Readable.from([workspaceTar(source)]));
    expect([...workspace.keys()].sort()).toEqual(["d", "d/f.txt"]);

    const other = await acquired();
    const unsafe = Buffer.concat([...encodeHeader({ path: "../evil", type: "File", mode: 0o644, size: 0 }), Buffer.alloc(1024)]);
    await expect(other.provider.seedWorkspace!(other.handle, Readable.from([unsafe]))).rejects.toMatchObject({ code: "provider_seed_archive_unsafe", message: expect.stringContaining("unsafe path") });
    expect(other.provider.store.get(other.handle.providerLeaseId)!.workspace.size).toBe(0);
  });

  it("an empty workspace's archive (only end-of-archive blocks) seeds an empty workspace and exports back empty", async () => {
    const { provider, handle } = await acquired();
    const workspace = provider.store.get(handle.providerLeaseId)!.workspace;
    workspace.set("leftover", { kind: "file", content: Buffer.from("old"), mode: 0o644 });
    const emptyDir = join(await scratch, "empty-host");
    await mkdir(emptyDir);
    await provider.seedWorkspace!(handle, Readable.from(exportWorkspaceArchive(emptyDir)));
    expect(workspace.size).toBe(0);
    // More zero blocks than two (a tar writer's record padding) are still only the end marker.
    await provider.seedWorkspace!(handle, Readable.from([Buffer.alloc(10 * 512)]));
    expect(workspace.size).toBe(0);
    const back = join(await scratch, "empty-back");
    await mkdir(back);
    const extracted = await extractValidatedArchive(await saveArchive(await provider.exportWorkspace!(handle), "empty-export"), back);
    expect(extracted).toMatchObject({ kind: "safe", entries: 0 });
    expect(await readdir(back)).toEqual([]);
  });

  it("a seed stream that is not a whole tar archive is refused and changes nothing", async () => {
    const { provider, handle } = await acquired();
    const workspace = provider.store.get(handle.providerLeaseId)!.workspace;
    workspace.set("kept.txt", { kind: "file", content: Buffer.from("kept"), mode: 0o644 });
    const full = workspaceTar(new Map([["f.txt", { kind: "file" as const, content: Buffer.alloc(2000, 120), mode: 0o644 }]]));
    const refused = {
      "no bytes": Buffer.alloc(0),
      "one zero block": Buffer.alloc(512),
      "zeros off the block size": Buffer.alloc(1500),
      "text": Buffer.from("this is not a tar archive\n".repeat(100)),
      "zeros then garbage": Buffer.concat([Buffer.alloc(1024), Buffer.from("x")]),
      "an archive cut inside its first file": full.subarray(0, 1024),
    };
    for (const [what, bytes] of Object.entries(refused)) {
      await expect(provider.seedWorkspace!(handle, Readable.from([bytes])), what).rejects.toMatchObject({ code: "provider_seed_archive_unsafe" });
      expect([...workspace.keys()], what).toEqual(["kept.txt"]);
    }
  });

  it("destroy is idempotent; inspect then reads missing", async () => {
    const { provider, handle } = await acquired();
    await provider.destroy!(handle);
    await provider.destroy!(handle);
    expect(await provider.inspect!(handle)).toEqual({ state: "missing", identity: null, processes: [] });
    await expect(provider.exec!(handle, execRequest())).rejects.toMatchObject({ code: "provider_sandbox_missing" });
  });
});

describe("fake provider faults", () => {
  it("failTimes(op, n) fails exactly the next n calls, before any effect", async () => {
    const provider = createFakeProvider();
    provider.faults.failTimes("acquire", 2);
    const req = request();
    await expect(provider.acquire!(req)).rejects.toMatchObject({ code: "provider_fault_injected", kind: "unavailable" });
    await expect(provider.acquire!(req)).rejects.toMatchObject({ code: "provider_fault_injected" });
    expect(provider.store.size).toBe(0);
    await expect(provider.acquire!(req)).resolves.toMatchObject({ identity: { providerLeaseId: `fake-${req.leaseId}` } });
  });

  it("failTimes takes a custom error", async () => {
    const { provider, handle } = await acquired();
    const error = new Error("boom");
    provider.faults.failTimes("stopLease", 1, error);
    await expect(provider.stopLease!(handle, { requestId: "r" })).rejects.toBe(error);
    expect((await provider.inspect!(handle)).state).toBe("running");
  });

  it("hang(op) never settles until the signal aborts", async () => {
    const { provider, handle } = await acquired();
    provider.faults.hang("exportWorkspace", 1);
    const abort = new AbortController();
    let settled = false;
    const pending = provider.exportWorkspace!(handle, { signal: abort.signal }).finally(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    abort.abort(new Error("gave up"));
    await expect(pending).rejects.toThrow("gave up");
    await expect(provider.exportWorkspace!(handle)).resolves.toBeDefined();
  });

  it("acquire is idempotent per lease id: after a lost reply the same lease gets the same sandbox back", async () => {
    const provider = createFakeProvider();
    const req = request();
    provider.faults.loseReply("acquire");
    await expect(provider.acquire!(req)).rejects.toMatchObject({ code: "provider_reply_lost" });
    expect(provider.store.size).toBe(1);
    const made = [...provider.store.values()][0]!;
    const again = await provider.acquire!(req);
    expect(again.identity).toEqual(made.identity);
    expect(provider.store.size).toBe(1);
    // Another lease gets its own sandbox.
    const other = await provider.acquire!(request());
    expect(other.identity.providerLeaseId).not.toBe(made.identity.providerLeaseId);
  });

  it("loseReply(op) performs the effect, then throws a transport error", async () => {
    const { provider, handle } = await acquired();
    provider.faults.loseReply("stopLease");
    await expect(provider.stopLease!(handle, { requestId: "r" })).rejects.toMatchObject({ code: "provider_reply_lost" });
    expect((await provider.inspect!(handle)).state).toBe("stopped");
    provider.faults.loseReply("destroy");
    await expect(provider.destroy!(handle)).rejects.toMatchObject({ code: "provider_reply_lost" });
    expect((await provider.inspect!(handle)).state).toBe("missing");
  });

  it("records every call, faulted ones included; clear() removes pending faults", async () => {
    const faults = new FakeFaults().failTimes("inspect", 5);
    const { provider, handle } = await acquired(createFakeProvider({ faults }));
    await expect(provider.inspect!(handle)).rejects.toMatchObject({ code: "provider_fault_injected" });
    faults.clear();
    await expect(provider.inspect!(handle)).resolves.toMatchObject({ state: "running" });
    expect(provider.calls.map((c) => c.op)).toEqual(["acquire", "inspect", "inspect"]);
  });

  it("bad fault arguments are refused and change nothing", async () => {
    const { provider, handle } = await acquired();
    expect(() => provider.faults.failTimes("inspect", 0)).toThrow(expect.objectContaining({ code: "fake_fault_invalid" }));
    expect(() => provider.faults.hang("teleport" as never)).toThrow(expect.objectContaining({ code: "fake_fault_invalid" }));
    await expect(provider.inspect!(handle)).resolves.toMatchObject({ state: "running" });
  });
});
