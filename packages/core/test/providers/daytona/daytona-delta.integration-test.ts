// The Daytona provider's delta and salvage exports against the emulator, received by the host's own delta
// verification (finalization/export-delta-snapshot.ts): the stat cache the seed recorded in the
// sandbox (outside the exported tree) spares hashing unchanged files; changes, removals, new
// links and exclusions come out exactly; a cache that lies is caught by the host, never trusted.
import { createWriteStream } from "node:fs";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { extractValidatedArchive } from "../../../src/copyback/archive/extract";
import { validateArchive } from "../../../src/copyback/archive/validate";
import { describe, expect, it } from "vitest";
import { exportDeltaSnapshot } from "../../../src/finalization/export-delta-snapshot";
import { takeManifest } from "../../../src/copyback/manifest/take-manifest";
import { createDaytonaProvider } from "../../../src/providers/daytona/daytona-provider";
import { drain, manifestOf, useDaytona } from "./daytona-fixture";

const w = useDaytona();

describe("daytona provider: delta export", { timeout: 60_000 }, () => {
  it("exports only what the agent changed, with the complete manifest, hashing only files whose stat moved", async () => {
    const { provider } = w();
    const a = await w().acquire();
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`src/f${i}.txt`] = `file ${i}\n`;
    const seeded = await w().tree({ ...files, "node_modules/dep.js": "dep", "gone.txt": "bye", "kept/": "" });
    await w().seed(a.handle, seeded);
    // The cache lives outside the exported tree.
    expect(JSON.parse(await readFile(join(a.sandboxDir, "copyback/control/stat-cache.tsv"), "utf8"))).toMatchObject({ version: 1 });
    const baseline = await manifestOf(seeded);
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // past the racy window of the next scan
    await w().exec(a.handle, ["sh", "-c", "echo changed > src/f3.txt && rm gone.txt && ln -s src/f1.txt link && mkdir -p new && echo n > new/n.txt && echo x > node_modules/dep.js"]);
    const work = await w().scratch();
    const delta = await exportDeltaSnapshot({ plugin: provider, lease: a.handle, workDir: work, baseline, exclude: ["node_modules"] });
    expect(delta.snapshotManifest).toEqual(await takeManifest(a.workspaceDir, { exclude: ["node_modules"] }));
    expect(delta.removed).toBe(1); // gone.txt (node_modules is excluded on both sides)
    expect(delta.changed).toBe(4); // src/f3.txt, link, new, new/n.txt
    expect(delta.report).toMatchObject({ statCache: "used", hashedFiles: 2 });
    expect(await readFile(join(delta.snapshotDir, "src/f3.txt"), "utf8")).toBe("changed\n");

    // Nothing changed since: no archive, nothing hashed again.
    const again = await provider.exportDelta!(a.handle, { baseline: delta.snapshotManifest as never, exclude: ["node_modules"] });
    expect(again.archive).toBeNull();
    expect(again.report).toMatchObject({ changed: 0, removed: 0, statCache: "used" });
  });

  it("a stat cache that lies about a file is caught by the host's verification (provider_delta_mismatch), never trusted", async () => {
    const { provider } = w();
    const a = await w().acquire();
    const seeded = await w().tree({ "a.txt": "alpha\n", "b.txt": "beta\n" });
    await w().seed(a.handle, seeded);
    const baseline = await manifestOf(seeded);
    const cacheFile = join(a.sandboxDir, "copyback/control/stat-cache.tsv");
    const cache = JSON.parse(await readFile(cacheFile, "utf8")) as { files: Record<string, unknown[]> };
    // The cache claims b.txt's bytes are a.txt's: an unchanged stat, a wrong hash.
    const aRecord = cache.files["a.txt"] as unknown[];
    (cache.files["b.txt"] as unknown[])[5] = aRecord[5];
    await writeFile(cacheFile, JSON.stringify(cache));
    await w().exec(a.handle, ["sh", "-c", "echo new > c.txt"]);
    const work = await w().scratch();
    const error = await exportDeltaSnapshot({ plugin: provider, lease: a.handle, workDir: work, baseline, exclude: [] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "provider_delta_mismatch" });
    // A malformed cache means "hash everything".
    await writeFile(cacheFile, "garbage");
    const fresh = await provider.exportDelta!(a.handle, { baseline, exclude: [] });
    expect(fresh.report).toMatchObject({ statCache: "invalid", changed: 1 });
    if (fresh.archive) await drain(fresh.archive);
  });
});

describe("daytona provider: delta export, bytes moved (issue 24)", { timeout: 60_000 }, () => {
  it("the stat cache is downloaded only by a controller without a copy of the sandbox's exact bytes, and not written again when unchanged", async () => {
    const { provider, emulator } = w();
    const a = await w().acquire();
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) files[`f${i}.txt`] = `file ${i}\n`;
    const seeded = await w().tree(files);
    await w().seed(a.handle, seeded);
    const baseline = await manifestOf(seeded);
    await w().exec(a.handle, ["sh", "-c", "echo changed > f3.txt"]);
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // the change past the racy window: cached by the next scan

    // A fresh controller (a restarted worker) holds no copy: its first download is the cache's,
    // cut short here, so it hashes everything and still exports the change.
    const fresh = createDaytonaProvider({ instanceRoot: join(w().root, "instance-2"), variables: (name) => w().variables.get(name), lifecycleTimeoutSec: 3, transferTimeoutSec: 60 });
    emulator.faults.once({ op: "download", kind: "truncate", afterBytes: 0 });
    const cold = await fresh.exportDelta!(a.handle, { baseline, exclude: [] });
    expect(cold.report).toMatchObject({ statCache: "invalid", changed: 1, hashedFiles: 20 });
    if (cold.archive) await drain(cold.archive);

    // The seeding controller's copy stands for the cache only while the sandbox holds exactly
    // those bytes: the cache was rewritten by the fresh controller, so it is downloaded again.
    const warm = await provider.exportDelta!(a.handle, { baseline, exclude: [] });
    expect(warm.report).toMatchObject({ statCache: "used", changed: 1, hashedFiles: 0 });
    if (warm.archive) await drain(warm.archive);
    // Now it holds the copy: the first download of the next export is the listing, not the
    // cache (the cut-short download fails the export instead of degrading the cache).
    const cacheFile = join(a.sandboxDir, "copyback/control/stat-cache.tsv");
    const before = await stat(cacheFile);
    emulator.faults.once({ op: "download", kind: "truncate", afterBytes: 0 });
    // (A download cut before its first byte is reported as unreachable today: STATUS, issue 21.)
    await expect(provider.exportDelta!(a.handle, { baseline, exclude: [] })).rejects.toMatchObject({ code: expect.stringMatching(/^(transfer_dropped|provider_daytona_unreachable)$/) });
    const again = await provider.exportDelta!(a.handle, { baseline, exclude: [] });
    expect(again.report).toMatchObject({ statCache: "used", changed: 1, hashedFiles: 0 });
    if (again.archive) await drain(again.archive);
    // Nothing changed: the sandbox already held these cache bytes, so none were written.
    const after = await stat(cacheFile);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });
});

describe("daytona provider: salvage export", { timeout: 60_000 }, () => {
  it("R-UA-2 after a rejected archive, the salvage export keeps files, directories and inside links only, and passes validation", async () => {
    const { provider } = w();
    const a = await w().acquire();
    await w().seed(a.handle, await w().tree({ "src/a.txt": "a", "empty/": "", "node_modules/x": "x" }));
    await w().exec(a.handle, ["sh", "-c", "ln -s src/a.txt good && ln -s /etc/passwd absolute && ln -s ../../outside escape && ln -s nowhere dangling && ln -s loop1 loop2 && ln -s loop2 loop1 && ln -s good chained && mkfifo pipe"]);
    const dir = await w().scratch();
    await pipeline(await provider.exportWorkspace!(a.handle), createWriteStream(join(dir, "full.tar")));
    expect((await validateArchive(join(dir, "full.tar"))).kind).toBe("rejected");
    const salvage = await provider.salvageExport!(a.handle, { exclude: ["node_modules"] });
    expect(salvage.message).toMatch(/unsafe links/);
    await pipeline(salvage.archive, createWriteStream(join(dir, "salvage.tar")));
    expect(await validateArchive(join(dir, "salvage.tar"))).toMatchObject({ kind: "safe" });
    const out = join(dir, "tree");
    await mkdir(out);
    await extractValidatedArchive(join(dir, "salvage.tar"), out);
    expect((await takeManifest(out)).entries.map((e) => `${e.type}:${e.path}`)).toEqual(["symlink:chained", "directory:empty", "symlink:good", "directory:src", "file:src/a.txt"]);
  });
});
