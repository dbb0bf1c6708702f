// Unsafe archives against a real PostgreSQL, real files and real tar streams: the workspace's
// exclusions reach the provider's export (excluded trees are neither exported nor validated), a
// truncated or broken export stream is a transport failure that is retried (R-RR-1), and an
// archive over a limit or with colliding paths is a terminal failure naming the limit, never a
// silent omission (R-UA-3). Unsafe links still salvage and omit (finalize-run.integration-test.ts).
import { open } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { DEFAULT_ARCHIVE_LIMITS } from "../../src/copyback/archive/limits";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { buildWorld, preparedRun, readTree, writeTree, type World } from "./finalization-fixture";

const db = useTestDatabase();
/** A workspace that excludes node_modules and .venv, and one that excludes nothing. */
let excluding: World;
let plain: World;

beforeAll(async () => {
  excluding = await buildWorld(db.prisma(), db.url(), { excludedPaths: ["node_modules", ".venv"] });
  plain = await buildWorld(db.prisma(), db.url());
});

afterAll(async () => {
  await excluding?.cleanup();
  await plain?.cleanup();
});

async function state(runId: string) {
  const prisma = db.prisma();
  const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
  const coordinator = await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId } });
  const operations = await prisma.workspaceOperation.findMany({ where: { runId, phase: "workspace_finalize" }, orderBy: { createdAt: "asc" } });
  const events = await prisma.runEvent.findMany({ where: { runId }, orderBy: { createdAt: "asc" } });
  return { run, coordinator, operations, events };
}

/** A sparse file one byte over the single-entry limit (no disk space is used). */
async function oversizedFile(path: string): Promise<void> {
  const handle = await open(path, "w");
  try {
    await handle.truncate(DEFAULT_ARCHIVE_LIMITS.maxEntryBytes + 1);
  } finally {
    await handle.close();
  }
}

/** What an installed dependency tree brings along: absolute links, escaping links, a huge file. */
async function writeExcludedTrees(sandbox: string): Promise<void> {
  await writeTree(sandbox, {
    "node_modules/.bin/tool": "->/usr/lib/node_modules/tool/cli.js",
    "node_modules/escape": "->../../../../etc",
    "node_modules/pkg/index.js": "module.exports = 1;\n",
    ".venv/bin/python": "->/usr/bin/python3",
    ".venv/lib": null,
  });
  await oversizedFile(join(sandbox, "node_modules/pkg/huge.bin"));
}

describe("unsafe archives", () => {
  it("R-UA-2: the workspace's exclusions reach the export: excluded links and an oversized file can neither force a salvage nor push the archive over a limit, and the rest commits from the primary export", async () => {
    const world = excluding;
    await writeTree(world.hostPath, { "src/app.ts": "old" });
    const run = await preparedRun(world);
    await writeTree(run.sandbox, { "src/app.ts": "new", "src/added.ts": "added" });
    await writeExcludedTrees(run.sandbox);
    const salvagesBefore = world.provider.salvages;
    const optionsBefore = world.provider.exportOptions.length;

    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed", barrier: "written", counts: { written: 2, deleted: 0 } });
    expect(world.provider.salvages).toBe(salvagesBefore);
    expect(world.provider.exportOptions.slice(optionsBefore)).toEqual([{ call: "export", exclude: ["node_modules", ".venv"] }]);
    const tree = await readTree(world.hostPath);
    expect(tree).toMatchObject({ "src/app.ts": "new", "src/added.ts": "added" });
    expect(Object.keys(tree).filter((p) => p.startsWith("node_modules") || p.startsWith(".venv"))).toEqual([]);
    const s = await state(run.runId);
    expect(s.operations.at(-1)).toMatchObject({ status: "succeeded", metadata: { stage: "primary" } });
    expect(s.events.map((e) => e.code)).not.toContain("workspace.export_salvaged");
    expect(s.events.map((e) => e.code)).not.toContain("workspace_export_omitted");
  });

  it("R-UA-3: the same trees without exclusions: the oversized file is a terminal failure naming the limit, not an omission, and no salvage export is asked for", async () => {
    const world = plain;
    const run = await preparedRun(world);
    await writeTree(run.sandbox, { "work.txt": "would be lost if omitted" });
    await oversizedFile(join(run.sandbox, "huge.bin"));
    const hostBefore = await readTree(world.hostPath);
    const salvagesBefore = world.provider.salvages;

    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "terminal_failure", code: "native_workspace_sync_out_entry_too_large" });
    expect(world.provider.salvages).toBe(salvagesBefore);
    expect(await readTree(world.hostPath)).toEqual(hostBefore);
    const s = await state(run.runId);
    expect(s.coordinator).toMatchObject({
      phase: "terminal_failure",
      failureCode: "native_workspace_sync_out_entry_too_large",
      failureDetail: { attempt: 1, kind: "limit", violation: "entry_too_large", limit: "maxEntryBytes", max: DEFAULT_ARCHIVE_LIMITS.maxEntryBytes, path: "huge.bin" },
    });
    expect(s.operations).toHaveLength(1);
    expect(s.operations[0]).toMatchObject({ status: "failed", errorCode: "native_workspace_sync_out_entry_too_large" });
    expect(s.run).toMatchObject({ status: "failed", errorCode: "native_workspace_sync_out_entry_too_large" });
    // Held, not omitted, and not retried in process (a second export cannot shrink the tree).
    const codes = s.events.map((e) => e.code);
    expect(codes).not.toContain("workspace_export_omitted");
    expect(codes).not.toContain("workspace.copyback_retry");
    expect(s.events.find((e) => e.code === "workspace.copyback_failed")).toMatchObject({ level: "error" });
  });

  it("R-UA-3: paths that differ only by letter case are a terminal collision failure with the path named, never omitted", async () => {
    const world = plain;
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "docs/Readme.md": "one", "docs/README.md": "two" });
    const hostBefore = await readTree(world.hostPath);

    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "terminal_failure", code: "native_workspace_sync_out_case_collision" });
    expect(await readTree(world.hostPath)).toEqual(hostBefore);
    const s = await state(run.runId);
    expect(s.coordinator.failureDetail).toMatchObject({ kind: "collision", violation: "case_collision", limit: "rejectCaseCollisions" });
    expect(["docs/Readme.md", "docs/README.md"]).toContain((s.coordinator.failureDetail as { path: string }).path);
    expect(s.events.map((e) => e.code)).not.toContain("workspace_export_omitted");
    expect(s.run.status).toBe("failed");
  });

  it("R-RR-1: a truncated export stream is a transport failure: retried in process, then the export commits; nothing is omitted", async () => {
    const world = plain;
    const run = await preparedRun(world);
    await writeTree(run.sandbox, { "after-truncation.txt": "made it", "padding.bin": "x".repeat(4096) });
    world.provider.faults.truncatedExports = 2;
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed", barrier: "written" });
    expect((await readTree(world.hostPath))["after-truncation.txt"]).toBe("made it");
    const s = await state(run.runId);
    const retries = s.events.filter((e) => e.code === "workspace.copyback_retry");
    expect(retries).toHaveLength(2);
    for (const retry of retries) expect(retry.payload).toMatchObject({ reason: "transfer_dropped", errorCode: "workspace_export_truncated" });
    expect(s.events.map((e) => e.code)).not.toContain("workspace_export_omitted");
    expect(s.operations).toHaveLength(1);
  });

  it("R-RR-1: a broken export stream (an error mid-transfer) is retried the same way", async () => {
    const world = plain;
    const run = await preparedRun(world);
    await writeTree(run.sandbox, { "after-reset.txt": "made it", "padding.bin": "y".repeat(4096) });
    world.provider.faults.brokenExports = 1;
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed" });
    expect((await readTree(world.hostPath))["after-reset.txt"]).toBe("made it");
    const retries = (await state(run.runId)).events.filter((e) => e.code === "workspace.copyback_retry");
    expect(retries).toHaveLength(1);
    expect(retries[0]?.payload).toMatchObject({ reason: "transfer_dropped", errorCode: "archive_unreadable" });
  });

  it("R-RR-1: a stream truncated on every try leaves the coordinator retryable like any transient failure: no omission, the host untouched, the accepted result kept", async () => {
    const world = plain;
    const run = await preparedRun(world);
    await writeTree(run.sandbox, { "later.txt": "later", "padding.bin": "z".repeat(4096) });
    const hostBefore = await readTree(world.hostPath);
    world.provider.faults.truncatedExports = 3;
    try {
      const outcome = await finalizeRun(world.deps(), { runId: run.runId });
      expect(outcome).toMatchObject({ kind: "retryable_failure", code: "workspace_export_truncated" });
    } finally {
      world.provider.faults.truncatedExports = 0;
    }
    expect(await readTree(world.hostPath)).toEqual(hostBefore);
    const s = await state(run.runId);
    expect(s.coordinator).toMatchObject({ phase: "retryable_failure", failureCode: "workspace_export_truncated", resultId: run.resultId });
    expect(s.events.map((e) => e.code)).not.toContain("workspace_export_omitted");
    expect(s.run.status).not.toBe("succeeded");
  });

  it("R-UA-1: an unsafe link beside the work still never fails the task: it is salvaged away and the work commits", async () => {
    const world = plain;
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "kept.txt": "kept", "bad-link": "->/etc/passwd" });
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed" });
    const tree = await readTree(world.hostPath);
    expect(tree["kept.txt"]).toBe("kept");
    expect(tree).not.toHaveProperty("bad-link");
    expect((await state(run.runId)).run.status).toBe("succeeded");
  });
});
