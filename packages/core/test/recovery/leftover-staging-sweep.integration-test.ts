// A controller killed mid-copy leaves its attempt's staging directory (an extracted workspace,
// up to its whole size); the attested or resumed copyback commits in a new attempt. The reconciler
// removes a settled run's attempt directories, and only those.
import { lstat, mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { leftoverStagingSweep } from "../../src/recovery/sweeps/leftover-staging-sweep";
import { preparedRun, type World, useWorld } from "../finalization/finalization-fixture";
import { markFinalizing } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

const stagingRoot = () => join(world.instanceRoot, "staging");
const exists = (path: string) => lstat(path).then(() => true, () => false);

/** What a controller killed after extracting leaves: a try directory with a snapshot. */
async function leaveAttempt(name: string): Promise<string> {
  const dir = join(stagingRoot(), name);
  await mkdir(join(dir, "try-1", "snapshot", "src"), { recursive: true });
  await writeFile(join(dir, "try-1", "snapshot", "src", "a.txt"), "extracted\n");
  return dir;
}

describe("leftover finalization staging", () => {
  it("a committed run's dead attempt is removed; an in-flight run's and foreign names are kept, and a link inside is not followed", async () => {
    const committed = await preparedRun(world, "done");
    expect((await finalizeRun(world.deps(), { runId: committed.runId })).kind).toBe("committed");
    const inFlight = await preparedRun(world, "done");
    await markFinalizing(db.prisma(), inFlight.runId);

    const dead = await leaveAttempt(`${committed.runId}-1`);
    // A link in the dead attempt points at a file outside: removed as a link, the file stays.
    const outside = join(world.hostPath, "..", "outside.txt");
    await writeFile(outside, "keep me\n");
    await symlink(outside, join(dead, "try-1", "snapshot", "link"));
    const running = await leaveAttempt(`${inFlight.runId}-1`);
    const legacy = await leaveAttempt(`${committed.runId}-legacy`);
    const unknown = await leaveAttempt("0f8fad5b-d9cb-469f-a165-70867728950e-1"); // no such run

    const sweep = leftoverStagingSweep({ db: db.prisma(), instanceRoot: world.instanceRoot });
    const units = await sweep.due(100);
    expect(units.map((u) => u.name)).toEqual([`${committed.runId}-1`]);
    expect(await sweep.handle(units[0]!)).toBe("removed");

    expect(await exists(dead)).toBe(false);
    expect(await exists(outside)).toBe(true);
    for (const kept of [running, legacy, unknown]) expect(await exists(kept)).toBe(true);
    expect(await sweep.due(100)).toEqual([]);
  });

  it("judged again when handled: a run re-admitted between the selection and the removal keeps its directory", async () => {
    const run = await preparedRun(world, "done");
    expect((await finalizeRun(world.deps(), { runId: run.runId })).kind).toBe("committed");
    const dir = await leaveAttempt(`${run.runId}-2`);
    const sweep = leftoverStagingSweep({ db: db.prisma(), instanceRoot: world.instanceRoot });
    const [unit] = (await sweep.due(100)).filter((u) => u.runId === run.runId);
    expect(unit).toBeDefined();
    await markFinalizing(db.prisma(), run.runId);
    expect(await sweep.handle(unit!)).toBe("left_in_flight");
    expect(await exists(dir)).toBe(true);
  });

  it("an instance without a staging directory has nothing due", async () => {
    const sweep = leftoverStagingSweep({ db: db.prisma(), instanceRoot: join(world.instanceRoot, "nowhere") });
    expect(await sweep.due(10)).toEqual([]);
    expect(await readdir(world.instanceRoot)).toContain("staging");
  });
});
