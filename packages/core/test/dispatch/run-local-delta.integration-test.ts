// Run finalization copies back through the delta export on the real local provider
// (the seed's stat cache, a tar of only the changed entries plus the full snapshot manifest,
// verified on the host), falls back to the full export in the same try when the host refuses the
// delta, and is retried like any export when the sandbox fails it. Real PostgreSQL, real host
// workspaces, real sandboxes and agent processes, through executeRun as the worker drives it.
import { createHash } from "node:crypto";
import { lstat, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { DispatchWorld, PLAIN_LOCAL_PLUGIN, readTree, submitResult, type Task } from "./dispatch-fixture";

const database = useTestDatabase({ poolSize: 8 });
const world = new DispatchWorld(database);
beforeAll(() => world.setUp());
afterAll(() => world.tearDown());

type Payload = Record<string, unknown>;
const payloads = (s: Awaited<ReturnType<DispatchWorld["state"]>>, code: string) => s.events.filter((e) => e.code === code).map((e) => e.payload as Payload);
const modeOf = async (file: string) => (await lstat(file)).mode & 0o777;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

async function excluding(task: Task, excludedPaths: string[]): Promise<void> {
  await world.db.executionWorkspace.update({ where: { id: task.workspaceId }, data: { excludedPaths } });
}

describe("finalization through the delta export (local provider)", () => {
  it("R-LK-6 commits edits, deletes, a rename, a retargeted symlink, a mode change and a new directory through the delta; the host equals the sandbox; exclusions are left alone", async () => {
    const task = await world.task({
      files: {
        "keep.txt": "keep\n",
        "edit.txt": "original\n",
        "delete-me.txt": "bye\n",
        "old/name.txt": "moved\n",
        "gone/inner/x.txt": "x\n",
        "script.sh": "#!/bin/sh\necho hi\n",
        "node_modules/pkg.js": "host dependency\n",
      },
      script: [
        "printf 'edited\\n' > edit.txt",
        "rm delete-me.txt",
        "mkdir -p new && mv old/name.txt new/name.txt && rmdir old",
        "rm -r gone",
        "chmod 755 script.sh",
        "ln -s keep.txt link && ln -sfn edit.txt link",
        "mkdir emptydir",
        "echo added > added.txt",
        // Excluded: never exported, never compared, never written to the host.
        "mkdir -p node_modules && echo sandbox > node_modules/new.js",
        submitResult(),
      ].join(" && "),
    });
    await excluding(task, ["node_modules"]);
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run.status).toBe("succeeded");
    expect(s.coordinator?.phase).toBe("committed");

    expect(await readTree(task.hostPath)).toEqual({
      "keep.txt": { type: "file", content: "keep\n" },
      "edit.txt": { type: "file", content: "edited\n" },
      new: { type: "dir" },
      "new/name.txt": { type: "file", content: "moved\n" },
      "script.sh": { type: "file", content: "#!/bin/sh\necho hi\n" },
      link: { type: "symlink", target: "edit.txt" },
      emptydir: { type: "dir" },
      "added.txt": { type: "file", content: "added\n" },
      node_modules: { type: "dir" },
      "node_modules/pkg.js": { type: "file", content: "host dependency\n" },
    });
    expect(await modeOf(path.join(task.hostPath, "script.sh"))).toBe(0o755);
    expect(await modeOf(path.join(task.hostPath, "keep.txt"))).toBe(0o644);

    // The run log names the path taken: one delta export, no fallback, no retry.
    const exported = payloads(s, "workspace.exported");
    expect(exported).toHaveLength(1);
    expect(exported[0]).toMatchObject({ path: "delta", statCache: "used", try: 1, removed: 6 });
    // Carried: edit.txt, new, new/name.txt, script.sh, link, emptydir, added.txt.
    expect(exported[0]?.changed).toBe(7);
    // Read and hashed in the sandbox: only the four files whose stat changed (the seed's cache vouches for keep.txt).
    expect(exported[0]?.hashedFiles).toBe(4);
    expect(exported[0]?.bytes).toBe("edited\n".length + "moved\n".length + "#!/bin/sh\necho hi\n".length + "added\n".length);
    expect(Number(exported[0]?.archiveBytes)).toBeGreaterThan(0);
    expect(s.codes).not.toContain("workspace.delta_fallback");
    expect(s.codes).not.toContain("workspace.copyback_retry");
    const finalize = s.operations.find((op) => op.phase === "workspace_finalize");
    expect(finalize?.metadata).toMatchObject({ export: { path: "delta" }, written: expect.any(Number), deleted: expect.any(Number) });
  });

  it("R-LK-6 an unchanged sandbox sends no archive: only the manifests are compared and the host stays as it is", async () => {
    const task = await world.task({ files: { "a.txt": "a\n", "d/b.txt": "b\n" }, script: submitResult() });
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run.status).toBe("succeeded");
    expect(payloads(s, "workspace.exported")).toEqual([expect.objectContaining({ path: "delta", changed: 0, removed: 0, bytes: 0, archiveBytes: 0, hashedFiles: 0, statCache: "used" })]);
    expect(payloads(s, "workspace.merged")).toEqual([expect.objectContaining({ unchanged: true, written: 0, deleted: 0 })]);
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" }, d: { type: "dir" }, "d/b.txt": { type: "file", content: "b\n" } });
  });

  it("R-RR-1 a delta the host's verification refuses (a corrupted stat cache) falls back to the full export in the same try and still commits exactly", async () => {
    // Without bubblewrap the agent can reach the provider's control directory: it rewrites the
    // cached hash of a file it never touches, so the sandbox's manifest claims keep.txt changed
    // while the archive carries keep.txt's real bytes.
    const keep = sha256("keep\n");
    const task = await world.task({
      pluginId: PLAIN_LOCAL_PLUGIN,
      files: { "keep.txt": "keep\n", "edit.txt": "original\n" },
      // The cache stores raw hash bytes (stat-cache-format.ts): perl swaps them in place.
      script: [
        `perl -0777 -pi -e 'BEGIN { $o = pack("H*", "${keep}"); $n = pack("H*", "${sha256("not keep")}") } s/\\Q$o\\E/$n/' ../control/stat-cache.bin`,
        `perl -0777 -ne 'exit(index($_, pack("H*", "${sha256("not keep")}")) < 0 ? 1 : 0)' ../control/stat-cache.bin`,
        "printf 'edited\\n' > edit.txt",
        "echo new > new.txt",
        submitResult(),
      ].join(" && "),
    });
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run.status).toBe("succeeded");
    expect(s.coordinator?.phase).toBe("committed");
    expect(payloads(s, "workspace.delta_fallback")).toEqual([expect.objectContaining({ reason: "provider_delta_mismatch", try: 1 })]);
    expect(payloads(s, "workspace.exported")).toEqual([expect.objectContaining({ path: "full", fallbackFrom: "provider_delta_mismatch", try: 1, entries: 3 })]);
    expect(s.codes).not.toContain("workspace.copyback_retry");
    expect(s.codes.indexOf("workspace.delta_fallback")).toBeLessThan(s.codes.indexOf("workspace.exported"));
    expect(await readTree(task.hostPath)).toEqual({
      "keep.txt": { type: "file", content: "keep\n" },
      "edit.txt": { type: "file", content: "edited\n" },
      "new.txt": { type: "file", content: "new\n" },
    });
  });

  it("an empty host workspace comes back through the full export at once: against an empty baseline a delta could leave nothing out", async () => {
    const task = await world.task({ files: {}, script: `mkdir -p src && echo one > src/one.txt && ln -s src/one.txt one && ${submitResult()}` });
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run.status).toBe("succeeded");
    expect(payloads(s, "workspace.exported")).toEqual([expect.objectContaining({ path: "full", deltaSkipped: "empty_baseline", fallbackFrom: null, entries: 3 })]);
    expect(s.codes).not.toContain("workspace.delta_fallback");
    expect(await readTree(task.hostPath)).toEqual({ one: { type: "symlink", target: "src/one.txt" }, src: { type: "dir" }, "src/one.txt": { type: "file", content: "one\n" } });
  });

  it("R-RR-1 a legacy run's copy-back restores its files through the delta too", async () => {
    const task = await world.task({
      files: { "keep.txt": "keep\n", "edit-me.txt": "old\n", "drop.txt": "drop\n" },
      adapterConfig: { adapter: "legacy", timeoutSeconds: 60 },
      script: `printf 'new\\n' > edit-me.txt && rm drop.txt && echo hi > added.txt && ${submitResult()}`,
    });
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ runtimeMode: "legacy", status: "succeeded" });
    expect(payloads(s, "workspace.exported")).toEqual([expect.objectContaining({ path: "delta", changed: 2, removed: 1, try: 1 })]);
    expect(await readTree(task.hostPath)).toEqual({
      "added.txt": { type: "file", content: "hi\n" },
      "edit-me.txt": { type: "file", content: "new\n" },
      "keep.txt": { type: "file", content: "keep\n" },
    });
  });

  it("R-RR-1 a delta export the sandbox fails (rehearsed export failure) fails the try before any host write; the retry exports a delta again", async () => {
    const task = await world.task({ files: { "a.txt": "a\n" }, script: `echo b > b.txt && ${submitResult()}` });
    await world.db.environment.update({ where: { id: task.environmentId }, data: { config: { faults: { failExports: 1 } } } });
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run.status).toBe("succeeded");
    expect(payloads(s, "workspace.copyback_retry")).toEqual([expect.objectContaining({ try: 1, errorCode: "provider_fault_injected" })]);
    expect(s.codes).not.toContain("workspace.delta_fallback");
    expect(payloads(s, "workspace.exported")).toEqual([expect.objectContaining({ path: "delta", try: 2, changed: 1 })]);
    expect(await readFile(path.join(task.hostPath, "b.txt"), "utf8")).toBe("b\n");
  });
});
