// The emulator through the real @daytonaio/sdk: lifecycle, files, processes, timers.
import { createHash, randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { MINUTE_MS } from "../support/daytona/timers";
import { useHarness } from "./sdk-harness";

const h = useHarness();

describe("Daytona emulator through the SDK", () => {
  it("creates a labelled sandbox that is started, listed by labels and read back", async () => {
    const sandbox = await h().daytona.create({ labels: { company: "c1", run: "r1" }, autoStopInterval: 30, autoDeleteInterval: -1 });
    expect(sandbox.state).toBe("started");
    expect(sandbox.labels).toMatchObject({ company: "c1", run: "r1" });
    await h().daytona.create({ labels: { company: "c2" } });
    const found: string[] = [];
    for await (const item of h().daytona.list({ labels: { company: "c1" } })) found.push(item.id);
    expect(found).toEqual([sandbox.id]);
    const again = await h().daytona.get(sandbox.id);
    expect(again.autoStopInterval).toBe(30);
    expect(again.autoDeleteInterval).toBe(-1);
    await sandbox.setLabels({ company: "c1", lease: "l9" });
    await sandbox.refreshData();
    expect(sandbox.labels).toEqual({ company: "c1", lease: "l9" });
  });

  it("uploads a tree, runs a command that edits it, downloads byte for byte", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    const binary = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
    await sandbox.fs.uploadFiles([
      { source: Buffer.from("hello\n"), destination: "work/a.txt" },
      { source: binary, destination: "work/deep/bin.dat" },
    ]);
    await sandbox.fs.uploadFile(Buffer.from("single"), "work/single.txt");
    expect(await readFile(path.join(h().root, sandbox.id, "work/deep/bin.dat"))).toEqual(binary);
    const run = await sandbox.process.executeCommand("printf 'edited\\n' >> a.txt && cat a.txt", "work");
    expect(run.exitCode).toBe(0);
    expect(run.result).toBe("hello\nedited\n");
    expect((await sandbox.fs.downloadFile("work/a.txt")).toString()).toBe("hello\nedited\n");
    expect(await sandbox.fs.downloadFile("work/deep/bin.dat")).toEqual(binary);
    const many = await sandbox.fs.downloadFiles([{ source: "work/single.txt" }, { source: "work/missing.txt" }]);
    expect(many[0]?.result?.toString()).toBe("single");
    expect(many[1]?.error).toMatch(/missing/);
    const stream = await sandbox.fs.downloadFileStream("work/deep/bin.dat");
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks)).toEqual(binary);
    const failed = await sandbox.process.executeCommand("echo oops >&2; exit 3");
    expect(failed).toMatchObject({ exitCode: 3, result: "oops\n" });
  });

  it("answers file details, listings, folders, permissions and deletes", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    await sandbox.fs.createFolder("tree/sub", "755");
    await sandbox.fs.uploadFile(Buffer.from("12345"), "tree/f.txt");
    expect(await sandbox.fs.getFileDetails("tree/f.txt")).toMatchObject({ name: "f.txt", isDir: false, size: 5 });
    expect((await sandbox.fs.listFiles("tree")).map((f) => [f.name, f.isDir])).toEqual([["f.txt", false], ["sub", true]]);
    await sandbox.fs.setFilePermissions("tree/f.txt", { mode: "600" });
    expect((await sandbox.fs.getFileDetails("tree/f.txt")).permissions).toBe("0600");
    await sandbox.fs.deleteFile("tree", true);
    await expect(sandbox.fs.getFileDetails("tree/f.txt")).rejects.toMatchObject({ statusCode: 404 });
  });

  it("executes with a timeout that kills the process group", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    const started = Date.now();
    await expect(sandbox.process.executeCommand("sleep 30 & sleep 30; echo never", undefined, undefined, 1)).rejects.toMatchObject({ statusCode: 408 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("runs session commands sync and async, with exit codes and (streamed) logs", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    await sandbox.process.createSession("s1");
    const sync = await sandbox.process.executeSessionCommand("s1", { command: "echo out; echo err >&2; exit 4" });
    expect(sync).toMatchObject({ exitCode: 4, stdout: "out\n", stderr: "err\n" });
    const bg = await sandbox.process.executeSessionCommand("s1", { command: "echo one; sleep 0.3; echo two >&2", runAsync: true });
    expect((await sandbox.process.getSessionCommand("s1", bg.cmdId)).exitCode).toBeUndefined();
    expect((await sandbox.process.listSessions()).map((s) => [s.sessionId, s.commands.map((c) => c.exitCode)])).toEqual([["s1", [4, undefined]]]);
    let out = "";
    let err = "";
    await sandbox.process.getSessionCommandLogs("s1", bg.cmdId, (c) => (out += c), (c) => (err += c));
    expect([out, err]).toEqual(["one\n", "two\n"]);
    expect((await sandbox.process.getSessionCommand("s1", bg.cmdId)).exitCode).toBe(0);
    expect(await sandbox.process.getSessionCommandLogs("s1", bg.cmdId)).toMatchObject({ stdout: "one\n", stderr: "two\n" });
    await sandbox.process.deleteSession("s1");
    await expect(sandbox.process.getSessionCommand("s1", bg.cmdId)).rejects.toMatchObject({ statusCode: 404 });
  });

  it("stops (files kept, toolbox refused), archives, starts again", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    await sandbox.fs.uploadFile(Buffer.from("keep me"), "k.txt");
    await sandbox.stop();
    expect(sandbox.state).toBe("stopped");
    expect(await readFile(path.join(h().root, sandbox.id, "k.txt"), "utf8")).toBe("keep me");
    await expect(sandbox.fs.downloadFile("k.txt")).rejects.toMatchObject({ statusCode: 400 });
    await expect(sandbox.process.executeCommand("true")).rejects.toMatchObject({ statusCode: 400 });
    await sandbox.archive();
    await new Promise((r) => setTimeout(r, 60));
    await sandbox.refreshData();
    expect(sandbox.state).toBe("archived");
    await sandbox.start();
    expect(sandbox.state).toBe("started");
    expect((await sandbox.fs.downloadFile("k.txt")).toString()).toBe("keep me");
    await sandbox.delete();
    await new Promise((r) => setTimeout(r, 60));
    await expect(h().daytona.get(sandbox.id)).rejects.toMatchObject({ statusCode: 404 });
  });

  it("reads back auto-delete disabled and the other intervals", async () => {
    const sandbox = await h().daytona.create({ labels: {}, autoDeleteInterval: 60 });
    await sandbox.setAutoDeleteInterval(-1);
    await sandbox.setAutostopInterval(5);
    await sandbox.setAutoArchiveInterval(120);
    await sandbox.refreshData();
    expect([sandbox.autoDeleteInterval, sandbox.autoStopInterval, sandbox.autoArchiveInterval]).toEqual([-1, 5, 120]);
  });

  it("fires auto-stop, auto-archive and auto-delete as the test clock advances", async () => {
    const kept = await h().daytona.create({ labels: {}, autoStopInterval: 15, autoArchiveInterval: 60, autoDeleteInterval: -1 });
    const doomed = await h().daytona.create({ labels: {}, autoStopInterval: 15, autoArchiveInterval: 60, autoDeleteInterval: 30 });
    h().emulator.clock.advance(15 * MINUTE_MS - 1);
    await kept.refreshData();
    expect(kept.state).toBe("started");
    h().emulator.clock.advance(1);
    await kept.refreshData();
    expect(kept.state).toBe("stopped");
    h().emulator.clock.advance(30 * MINUTE_MS);
    await expect(h().daytona.get(doomed.id)).rejects.toMatchObject({ statusCode: 404 });
    h().emulator.clock.advance(30 * MINUTE_MS);
    await kept.refreshData();
    expect(kept.state).toBe("archived");
    h().emulator.clock.advance(365 * 24 * 60 * MINUTE_MS);
    await kept.refreshData();
    expect(kept.state).toBe("archived");
  });

  it("streams a large download from disk byte for byte", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    const big = randomBytes(8 * 1024 * 1024);
    await writeFile(path.join(h().root, sandbox.id, "large.bin"), big);
    const hash = createHash("sha256");
    for await (const chunk of await sandbox.fs.downloadFileStream("large.bin")) hash.update(chunk as Buffer);
    expect(hash.digest("hex")).toBe(createHash("sha256").update(big).digest("hex"));
  });

  it("deletes an ephemeral sandbox as soon as it stops", async () => {
    const sandbox = await h().daytona.create({ labels: {}, ephemeral: true });
    expect(sandbox.autoDeleteInterval).toBe(0);
    await sandbox.fs.uploadFile(Buffer.from("gone"), "g.txt");
    await sandbox.stop();
    await expect(h().daytona.get(sandbox.id)).rejects.toMatchObject({ statusCode: 404 });
  });

  it("accepts a streamed upload", async () => {
    const sandbox = await h().daytona.create({ labels: {} });
    const data = Buffer.alloc(300_000, 9);
    await sandbox.fs.uploadFileStream(Readable.from([data.subarray(0, 100_000), data.subarray(100_000)]), "s/stream.bin");
    expect(await readFile(path.join(h().root, sandbox.id, "s/stream.bin"))).toEqual(data);
  });

  it("answers bad input clearly and changes nothing", async () => {
    const sandbox = await h().daytona.create({ labels: { a: "1" } });
    await expect(h().daytona.get("no-such-sandbox")).rejects.toMatchObject({ statusCode: 404 });
    await expect(h().client("wrong-key").get(sandbox.id)).rejects.toMatchObject({ statusCode: 401 });
    await expect(h().client("wrong-key").create({ labels: {} })).rejects.toMatchObject({ statusCode: 401 });
    await expect(sandbox.archive()).rejects.toMatchObject({ statusCode: 400 });
    await expect(sandbox.fs.uploadFile(Buffer.from("x"), "../escape.txt")).rejects.toMatchObject({ statusCode: 400 });
    await sandbox.refreshData();
    expect(sandbox.state).toBe("started");
    expect(h().emulator.sandboxes.list()).toHaveLength(1);
  });
});
