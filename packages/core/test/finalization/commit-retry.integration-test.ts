// A commit that fails after the barrier is retried on its own schedule (finalize-policy.ts
// decideCommitRetry). The files are on the host and only the transaction that applies the result
// failed (a plain database error, as a dropped connection or a restarted server gives): the
// coordinator waits 30 s for its first retry however many attempts were interrupted before, then
// 120 s, and the retry commits without exporting again. Found by the torture suite (CI, seed
// 24038588): the old backoff followed the coordinator's attempts, so a run whose earlier attempts
// had been killed waited the 15-minute cap. Real PostgreSQL, real host files, real tar exports.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { preparedRun, readTree, useWorld, writeTree, type World } from "./finalization-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

/** Makes the commit's move to `committed` fail with an ordinary database error while installed. */
async function refuseCommits(): Promise<() => Promise<void>> {
  const prisma = db.prisma();
  await prisma.$executeRawUnsafe(`
    CREATE OR REPLACE FUNCTION copyback_test_refuse_commit() RETURNS trigger AS $$
    BEGIN
      IF NEW.phase = 'committed' THEN RAISE EXCEPTION 'the commit is refused for this test' USING ERRCODE = '57P01'; END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql`);
  await prisma.$executeRawUnsafe(`CREATE TRIGGER copyback_test_refuse_commit BEFORE UPDATE ON native_run_finalizations FOR EACH ROW EXECUTE FUNCTION copyback_test_refuse_commit()`);
  return async () => {
    await prisma.$executeRawUnsafe(`DROP TRIGGER copyback_test_refuse_commit ON native_run_finalizations`);
  };
}

describe("a commit that fails after the barrier", () => {
  it("R-OWN-3: is retried 30 s later whatever the earlier interrupted attempts, then 120 s, keeping the export failures counted; the retry commits", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    const name = `commit-retry-${Math.random().toString(36).slice(2)}.txt`;
    await writeTree(run.sandbox, { [name]: "the run's work" });
    // Four attempts were interrupted before (killed owners, takeovers), one export failed transiently.
    await prisma.nativeRunFinalization.update({ where: { runId: run.runId }, data: { attempt: 4, failureDetail: { attempt: 4, transientFailures: 1 } } });

    const allow = await refuseCommits();
    let first;
    try {
      const before = Date.now();
      first = await finalizeRun(world.deps(), { runId: run.runId });
      expect(first).toMatchObject({ kind: "retryable_failure" });
      const coordinator = await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } });
      expect(coordinator.phase).toBe("retryable_failure");
      const wait = coordinator.nextAttemptAt!.getTime() - before;
      expect(wait).toBeGreaterThanOrEqual(29_000);
      expect(wait).toBeLessThan(60_000); // before the fix: 900 s (the cap), from attempt 4
      expect(coordinator.failureDetail).toMatchObject({ transientFailures: 1, commitFailures: 1 });
      expect((await readTree(world.hostPath))[name]).toBe("the run's work"); // the barrier stands

      // The second commit failure waits 120 s.
      await prisma.nativeRunFinalization.update({ where: { runId: run.runId }, data: { nextAttemptAt: new Date(Date.now() - 1_000) } });
      const again = Date.now();
      expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "retryable_failure" });
      const second = await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } });
      expect(second.nextAttemptAt!.getTime() - again).toBeGreaterThanOrEqual(119_000);
      expect(second.nextAttemptAt!.getTime() - again).toBeLessThan(150_000);
      expect(second.failureDetail).toMatchObject({ transientFailures: 1, commitFailures: 2 });
    } finally {
      await allow();
    }

    // Due again, the database accepting commits: the retry arbitrates from the barrier and commits.
    await prisma.nativeRunFinalization.update({ where: { runId: run.runId }, data: { nextAttemptAt: new Date(Date.now() - 1_000) } });
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "committed" });
    expect(await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId }, select: { status: true } })).toEqual({ status: "succeeded" });
  });
});
