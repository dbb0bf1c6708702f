// receiveWorkspaceArchive: validation while the stream arrives, extraction from the spool by
// writer threads, the manifest of what was written (R-UA-2, R-UA-4).
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ArchiveDestinationError,
  ArchiveReadError,
  exportWorkspaceArchive,
  receiveWorkspaceArchive,
} from "../../src/copyback/archive/index";
import { pooledBlocks } from "../../src/copyback/archive/spool-memory";
import { splitRuns } from "../../src/copyback/archive/write-spooled";
import { WRITER_BATCH_FILES, type FileJob } from "../../src/copyback/archive/write-worker";
import { classifyCopybackFailure } from "../../src/copyback/merge/classify";
import { takeManifest } from "../../src/copyback/manifest/take-manifest";
import { HOSTILE_CASES } from "./hostile-corpus";
import { describeTree, tempDir } from "./helpers";
import { dir, file, gzip, symlink as tarSymlink, tar } from "./tar-builder";

let tmp: { path: string; cleanup(): Promise<void> };
let ws: string;
let staging: string;

beforeEach(async () => {
  tmp = await tempDir("receive");
  ws = join(tmp.path, "ws");
  staging = join(tmp.path, "staging");
  await mkdir(ws);
  await mkdir(staging);
});
afterEach(async () => tmp.cleanup());

/** Enough files for several writer threads, plus the shapes an export must carry. */
async function buildWorkspace(root: string): Promise<void> {
  for (let d = 0; d < 12; d++) {
    await mkdir(join(root, `pkg${d}/src`), { recursive: true });
    for (let f = 0; f < 30; f++) {
      await writeFile(join(root, `pkg${d}/src/f${f}.ts`), randomBytes(100 + ((d * 31 + f) % 900)));
    }
  }
  await mkdir(join(root, "empty/nested"), { recursive: true });
  await mkdir(join(root, "private"));
  await chmod(join(root, "private"), 0o700);
  await writeFile(join(root, "private/secret.txt"), "s3cret\n");
  await chmod(join(root, "private/secret.txt"), 0o600);
  await writeFile(join(root, "run.sh"), "#!/bin/sh\n");
  await chmod(join(root, "run.sh"), 0o755);
  await writeFile(join(root, "empty-file"), "");
  // Spans several export chunks (1 MiB each).
  await writeFile(join(root, "big.bin"), randomBytes(3 * 1024 * 1024 + 77));
  await writeFile(join(root, "unicodé-ファイル.txt"), "utf8\n");
  await symlink("pkg0/src/f0.ts", join(root, "link"));
  await symlink("../run.sh", join(root, "empty/up-link"));
}

// Real files and writer threads: 5 s is too short on a loaded 2-core machine (clean-clone CI at load 20-30, 2026-12-07).
describe("receiveWorkspaceArchive", { timeout: 30_000 }, () => {
  it("R-UA-2 extracts a workspace export exactly and returns the manifest of what it wrote", async () => {
    await buildWorkspace(ws);
    const result = await receiveWorkspaceArchive({
      archive: exportWorkspaceArchive(ws),
      stagingDir: staging,
      writers: 3,
    });
    expect(result.kind).toBe("safe");
    if (result.kind !== "safe") return;
    expect(await describeTree(staging)).toEqual(await describeTree(ws));
    // Byte-identical to what reading the tree back gives (sizes, modes, hashes, order).
    expect(result.snapshotManifest).toEqual(await takeManifest(staging));
    expect(result.entries).toBe(result.snapshotManifest.entries.length);
    expect(result.spool.spilled).toBe(false);
  });

  it("R-UA-2 recycles an exclusive export's buffers only after extraction, and stays exact", async () => {
    await buildWorkspace(ws);
    const before = pooledBlocks();
    const first = await receiveWorkspaceArchive({
      archive: exportWorkspaceArchive(ws, { recycleBuffers: true }),
      stagingDir: staging,
    });
    expect(first.kind).toBe("safe");
    expect(pooledBlocks()).toBeGreaterThan(before); // given back once the writers finished
    // The next export writes into the recycled blocks; the next receive is still exact.
    const again = join(tmp.path, "staging-2");
    await mkdir(again);
    const second = await receiveWorkspaceArchive({
      archive: exportWorkspaceArchive(ws, { recycleBuffers: true }),
      stagingDir: again,
    });
    expect(await describeTree(again)).toEqual(await describeTree(ws));
    expect(await describeTree(staging)).toEqual(await describeTree(ws));
    if (first.kind === "safe" && second.kind === "safe")
      expect(second.snapshotManifest).toEqual(first.snapshotManifest);
  });

  it("does not recycle the buffers of an export that did not opt in", async () => {
    await writeFile(join(ws, "a.txt"), "a");
    const before = pooledBlocks();
    const chunks: Buffer[] = [];
    for await (const chunk of exportWorkspaceArchive(ws)) chunks.push(chunk as Buffer);
    const result = await receiveWorkspaceArchive({
      archive: Readable.from(chunks),
      stagingDir: staging,
    });
    expect(result.kind).toBe("safe");
    expect(pooledBlocks()).toBeLessThanOrEqual(before);
  });

  it("R-UA-2 spills above the memory bound to an unlinked file and extracts the same tree", async () => {
    await buildWorkspace(ws);
    const spillDirectory = join(tmp.path, "spill");
    await mkdir(spillDirectory);
    const result = await receiveWorkspaceArchive({
      archive: exportWorkspaceArchive(ws),
      stagingDir: staging,
      memoryLimitBytes: 64 * 1024,
      spillDirectory,
      writers: 2,
    });
    expect(result.kind === "safe" && result.spool.spilled).toBe(true);
    if (result.kind !== "safe") return;
    expect(await describeTree(staging)).toEqual(await describeTree(ws));
    expect(result.snapshotManifest).toEqual(await takeManifest(staging));
    expect(await readdir(spillDirectory)).toEqual([]);
  });

  it("R-UA-2 feeds each writer thread its files in bounded batches and hashes every one", async () => {
    // Two threads, each several batches of WRITER_BATCH_FILES long: answers must come back in
    // order and complete, or the manifest would pair a path with another file's hash.
    const count = 6 * WRITER_BATCH_FILES + 7;
    for (let d = 0; d < 8; d++) await mkdir(join(ws, `d${d}`));
    for (let i = 0; i < count; i++) await writeFile(join(ws, `d${i % 8}`, `f${i}.txt`), `file ${i}\n`.repeat(i % 5));
    const result = await receiveWorkspaceArchive({ archive: exportWorkspaceArchive(ws), stagingDir: staging, writers: 2 });
    expect(result.kind).toBe("safe");
    if (result.kind !== "safe") return;
    expect(result.snapshotManifest.entries.filter((e) => e.type === "file")).toHaveLength(count);
    expect(result.snapshotManifest).toEqual(await takeManifest(staging));
    expect(await takeManifest(staging)).toEqual(await takeManifest(ws));
  });

  it("R-UA-2 receives a gzip archive arriving in small pieces", async () => {
    const bytes = gzip(tar(dir("a/"), file("a/one.txt", "one\n"), tarSymlink("a/l", "one.txt")));
    const pieces = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) =>
      bytes.subarray(i * 7, i * 7 + 7),
    );
    const result = await receiveWorkspaceArchive({
      archive: Readable.from(pieces),
      stagingDir: staging,
    });
    expect(result.kind).toBe("safe");
    expect(await readFile(join(staging, "a/one.txt"), "utf8")).toBe("one\n");
    if (result.kind === "safe") {
      expect(result.snapshotManifest.entries.map((e) => [e.path, e.type])).toEqual([
        ["a", "directory"],
        ["a/l", "symlink"],
        ["a/one.txt", "file"],
      ]);
    }
  });

  it("R-UA-2 extracts the bytes it validated even if the producer reuses its buffer", async () => {
    const archive = tar(file("x.txt", "validated"));
    async function* reusing(): AsyncGenerator<Buffer> {
      const shared = Buffer.from(archive);
      yield shared;
      shared.fill(0x41); // after hand-over: must not reach the extracted file
    }
    const result = await receiveWorkspaceArchive({ archive: reusing(), stagingDir: staging });
    expect(result.kind).toBe("safe");
    expect(await readFile(join(staging, "x.txt"), "utf8")).toBe("validated");
  });

  HOSTILE_CASES.forEach((c, index) => {
    it(`R-UA-4 ${c.name}: rejected while streaming, nothing written`, async () => {
      const outside = join(tmp.path, `outside-${index}`);
      await mkdir(outside);
      const bytes = c.build(outside);
      // Arrives in uneven pieces, as from a socket.
      const pieces = [bytes.subarray(0, 700), bytes.subarray(700, 5000), bytes.subarray(5000)];
      const result = await receiveWorkspaceArchive({
        archive: Readable.from(pieces.filter((p) => p.length > 0)),
        stagingDir: staging,
        ...(c.limits ? { limits: c.limits } : {}),
      });
      expect(result.kind).toBe("rejected");
      if (result.kind === "rejected")
        expect(result.violations.map((v) => v.code)).toContain(c.code);
      expect(await readdir(staging)).toEqual([]);
      expect(await readdir(outside)).toEqual([]);
    });
  });

  it("R-UA-4 a stream destroyed mid-transfer is a truncated archive, nothing written", async () => {
    const bytes = tar(dir("a/"), file("a/one.txt", "x".repeat(5000)));
    const stream = new Readable({ read() {} });
    stream.push(bytes.subarray(0, 1536));
    setTimeout(() => stream.destroy(), 10);
    const result = await receiveWorkspaceArchive({ archive: stream, stagingDir: staging });
    expect(result.kind === "rejected" && result.violations[0]?.code).toBe("truncated_archive");
    expect(await readdir(staging)).toEqual([]);
  });

  it("R-UA-4 a stream that was already destroyed is refused as truncated, nothing written", async () => {
    const stream = Readable.from([tar(file("a.txt", "a"))]);
    stream.destroy();
    const result = await receiveWorkspaceArchive({ archive: stream, stagingDir: staging });
    expect(result.kind === "rejected" && result.violations[0]?.code).toBe("truncated_archive");
    expect(await readdir(staging)).toEqual([]);
  });

  it("R-RR-1 a dropped transfer fails retryable, with nothing written", async () => {
    const bytes = tar(dir("a/"), file("a/one.txt", "x".repeat(5000)));
    const stream = new Readable({ read() {} });
    stream.push(bytes.subarray(0, 1536));
    setTimeout(
      () => stream.destroy(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })),
      10,
    );
    const error = await receiveWorkspaceArchive({ archive: stream, stagingDir: staging }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ArchiveReadError);
    expect(classifyCopybackFailure(error)).toEqual({ retryable: true, reason: "transfer_dropped" });
    expect(await readdir(staging)).toEqual([]);
  });

  it("refuses a staging directory that is not empty, before reading the stream", async () => {
    await writeFile(join(staging, "already-here"), "x");
    let pulled = false;
    async function* archive(): AsyncGenerator<Buffer> {
      pulled = true;
      yield tar(file("x.txt", "x"));
    }
    await expect(
      receiveWorkspaceArchive({ archive: archive(), stagingDir: staging }),
    ).rejects.toBeInstanceOf(ArchiveDestinationError);
    expect(pulled).toBe(false);
    expect(await readdir(staging)).toEqual(["already-here"]);
  });
});

describe("splitRuns", () => {
  const job = (size: number, i: number): FileJob => ({
    path: `/d/f${i}`,
    offset: i * 1000,
    size,
    mode: 0o644,
    mtimeMs: 0,
  });

  it("cuts the files into contiguous runs of similar cost, in archive order", () => {
    const jobs = [10, 500_000, 10, 10, 500_000, 10, 10, 10].map(job);
    const runs = splitRuns(jobs, 2);
    expect(runs).toHaveLength(2);
    expect(runs.flat()).toEqual(jobs);
    const cost = (run: FileJob[]) => run.reduce((s, j) => s + j.size + 32 * 1024, 0);
    const [a, b] = runs.map(cost) as [number, number];
    expect(Math.max(a, b) / Math.min(a, b)).toBeLessThan(3);
  });

  it("never makes more runs than files or than asked", () => {
    expect(splitRuns([job(1, 0)], 4)).toHaveLength(1);
    expect(splitRuns([0, 1, 2, 3, 4, 5].map(job), 3).length).toBeLessThanOrEqual(3);
    expect(splitRuns([], 2)).toEqual([]);
  });
});
