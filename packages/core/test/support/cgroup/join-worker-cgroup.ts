// A child process for worker-cgroup.integration-test.ts: joins a worker cgroup as the worker does
// at start, then makes an exec's groups (a pids limit) as the local provider would, and prints
// both as one JSON line; it stays in its group until its standard input closes.
import { joinWorkerCgroup } from "../../../src/providers/local/worker-cgroup";
import { cgroupParent, createExecCgroups } from "../../../src/providers/local/cgroups";

// Probed before joining (as any earlier exec would): the join must make later execs look again.
await cgroupParent("pids");
const joined = await joinWorkerCgroup();
const exec = await createExecCgroups({ memoryBytes: null, processes: 32 });
process.stdout.write(`${JSON.stringify({ identity: joined.identity, dir: joined.dir, execJoins: exec?.joinFiles ?? [] })}\n`);
process.stdin.resume();
process.stdin.on("end", () => {
  void exec?.remove().then(() => process.exit(0));
});
