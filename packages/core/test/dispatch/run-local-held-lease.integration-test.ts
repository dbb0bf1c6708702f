// The held-lease rule on the real local provider: a lease that holds files for recovery is never
// handed to the next run. A failed run on a `reuse_by_environment` environment leaves its sandbox
// stopped and retained with a confirmed receipt; the next run on that environment gets another
// allocation, and the held sandbox's bytes (the failed agent's unexported edits) are untouched.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { DispatchWorld, readTree, submitResult, type TreeEntry } from "./dispatch-fixture";

const database = useTestDatabase({ poolSize: 8 });
const world = new DispatchWorld(database);
beforeAll(() => world.setUp());
afterAll(() => world.tearDown());

const sandboxWorkspace = (providerLeaseId: string) => path.join(world.instanceRoot, "sandboxes", providerLeaseId, "workspace");

/** Every file's bytes under a tree, hashed (links and directories by their tree entry). */
async function fingerprint(root: string): Promise<Record<string, string>> {
  const tree = await readTree(root);
  const out: Record<string, string> = {};
  for (const [rel, entry] of Object.entries(tree) as [string, TreeEntry][]) {
    out[rel] = entry.type === "file" ? createHash("sha256").update(await readFile(path.join(root, rel))).digest("hex") : JSON.stringify(entry);
  }
  return out;
}

describe("held sandboxes are never reused (local provider)", () => {
  it("R-EX-4: after a failed run on a reuse_by_environment environment, the next run gets another allocation and the held sandbox's bytes are untouched", async () => {
    // The failed agent edits the workspace and exits non-zero without a result: its edits exist
    // only in its sandbox (nothing is copied back from a failed run).
    const failing = await world.task({
      policy: "reuse_by_environment",
      files: { "a.txt": "host a\n", "keep/b.txt": "host b\n" },
      script: "printf 'unexported work\\n' > a.txt && mkdir -p draft && printf 'draft\\n' > draft/notes.md && rm keep/b.txt && exit 3",
    });
    const failedRun = await world.runOnce(failing);
    const failed = await world.state(failedRun);
    expect(failed.run).toMatchObject({ status: "failed", errorCode: "agent_exit_nonzero" });
    expect(failed.leases).toHaveLength(1);
    const held = failed.leases[0]!;
    // Stopped and retained with a confirmed receipt: exactly what reuse used to take.
    expect(held).toMatchObject({ status: "released", leasePolicy: "reuse_by_environment" });
    expect(held.metadata).toMatchObject({ sandboxStopAndRetainReceipt: { method: "environmentStopLease", providerLeaseId: held.providerLeaseId } });
    const heldRoot = sandboxWorkspace(held.providerLeaseId!);
    const before = await fingerprint(heldRoot);
    expect(Object.keys(before).sort()).toEqual(["a.txt", "draft", "draft/notes.md", "keep"]);
    // The host is as it was.
    expect(await readTree(failing.hostPath)).toEqual({ "a.txt": { type: "file", content: "host a\n" }, keep: { type: "dir" }, "keep/b.txt": { type: "file", content: "host b\n" } });

    // The next run on the same environment and workspace (another agent turn on the task). The
    // failed run's file-recovery obligation (R-FO-1) holds the task until an operator records its
    // evidence; recorded here by hand (the resolve service's write), the sandbox stays held.
    await world.db.issueRecoveryAction.updateMany({ where: { runId: failedRun, status: "active" }, data: { status: "resolved", outcome: "restored", resolvedAt: new Date(), resolvedByType: "user" } });
    await world.db.issue.update({ where: { id: failing.issueId }, data: { status: "todo" } });
    await world.db.agent.update({ where: { id: failing.agentId }, data: { command: ["/bin/sh", "-c", `printf 'second\\n' > second.txt && ${submitResult()}`] } });
    const nextRun = await world.runOnce(failing);
    const next = await world.state(nextRun);
    expect(next.run.status).toBe("succeeded");
    expect(next.leases).toHaveLength(1);
    const fresh = next.leases[0]!;
    expect(fresh.id).not.toBe(held.id);
    expect(fresh.providerLeaseId).not.toBe(held.providerLeaseId);
    expect(next.events.find((e) => e.code === "lease.acquired")?.payload).toMatchObject({ reused: false, leaseId: fresh.id });

    // The held sandbox: same lease row, same run, same receipt, and not one byte changed.
    const after = await world.db.environmentLease.findUniqueOrThrow({ where: { id: held.id } });
    expect(after).toMatchObject({ status: "released", runId: failedRun, providerLeaseId: held.providerLeaseId, metadata: held.metadata });
    expect(await fingerprint(heldRoot)).toEqual(before);
    expect(await readFile(path.join(heldRoot, "a.txt"), "utf8")).toBe("unexported work\n");
    // The second run's work reached the host from its own sandbox, seeded from the host.
    expect(await readTree(failing.hostPath)).toEqual({
      "a.txt": { type: "file", content: "host a\n" },
      keep: { type: "dir" },
      "keep/b.txt": { type: "file", content: "host b\n" },
      "second.txt": { type: "file", content: "second\n" },
    });

    // And the run after that reuses the second (committed, unheld) sandbox, never the held one.
    await world.db.issue.update({ where: { id: failing.issueId }, data: { status: "todo" } });
    const third = await world.state(await world.runOnce(failing));
    expect(third.run.status).toBe("succeeded");
    expect(third.events.find((e) => e.code === "lease.acquired")?.payload).toMatchObject({ reused: true, leaseId: fresh.id });
    expect(await fingerprint(heldRoot)).toEqual(before);
  });
});
