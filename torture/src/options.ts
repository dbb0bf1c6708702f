// The torture's command line:
// `pnpm torture -- [--minutes N] [--workers K] [--seed S] [--report FILE] [--workspaces M]
//   [--shared-slots J] [--stop-rate P] [--embedded] [--keep] [--quiet-seconds Q] [--aimed-kills P]
//   [--worker-concurrency C] [--max-queued Q] [--shared-arm-rate P] [--wake-in-fault-windows] [--attester operator|harness] [--provider local|daytona]
//   [--hosts N]`
// (`--hosts 2`: two instance roots with distinct host ids, `--workers` workers on EACH (default 2
//  then), the workspaces spread over both, the nemesis kind kill_host; two-host/)
// (the workload before the aimed one: --aimed-kills 0 --worker-concurrency 2 --max-queued 1000
//  --shared-arm-rate 0.8 --wake-in-fault-windows)
import { parseArgs } from "node:util";

export function parseOptions(argv: readonly string[]) {
  const { values: args } = parseArgs({
    options: {
      minutes: { type: "string", default: "3" },
      // Per host; default 3 with one host, 2 with more.
      workers: { type: "string" },
      hosts: { type: "string", default: "1" },
      seed: { type: "string" },
      report: { type: "string" },
      // 3 host workspaces (was 4) and 6 shared slots (was 3), so a transient export failure of a
      // shared run meets other shared runs' acquisitions (the held-lease rule's case) many times a
      // minute on a loaded 2-core machine; the same number of task slots (15), the faults unchanged.
      // Default 3 with one host, 2 per host with more.
      workspaces: { type: "string" },
      "slots-per-workspace": { type: "string", default: "3" },
      // Local task slots whose agents share one reuse_by_environment environment on workspace 0.
      "shared-slots": { type: "string", default: "6" },
      // The share of runs a client asks to Stop, at a random moment around the agent's finish.
      "stop-rate": { type: "string", default: "0.2" },
      // The clients wake runs inside a full-disk or PostgreSQL-restart window too, as before the aimed workload.
      "wake-in-fault-windows": { type: "boolean", default: false },
      // The share of shared-slot wakes that arm failExports on the next allocation (0.8 before the queue bound).
      "shared-arm-rate": { type: "string", default: "1" },
      // The most runs the clients keep queued (unbounded before: every idle slot woken).
      "max-queued": { type: "string", default: "2" },
      // Runs each worker executes at once (was 2: a kill then took both runs).
      "worker-concurrency": { type: "string", default: "1" },
      // The share of worker kills aimed at a worker copying or finalizing (nemesis-aim.ts); 0: all at random, as before.
      "aimed-kills": { type: "string", default: "0.9" },
      // The harness's operator discards verified retained sandboxes of runs without a result (operator.ts).
      "no-operator": { type: "boolean", default: false },
      embedded: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      "quiet-seconds": { type: "string", default: "150" },
      "idle-timeout-ms": { type: "string", default: "3000" },
      // Who proves a dead worker's stop: "operator" (loops/attester.ts attests through the API, as
      // before) or "harness" (harness-mode/: workers in cgroups of their own, the real apps/harness
      // process signs, the reconcilers take over; nothing is attested by the suite).
      attester: { type: "string", default: "operator" },
      // Where the non-fake slots' agents run: "local" (sandboxes under the instance root, as before)
      // or "daytona" (daytona-mode/: the Daytona emulator in this process, its faults as nemesis kinds).
      provider: { type: "string", default: "local" },
      // Comma-separated nemesis kinds to leave out, e.g. --without disk_full,pg_restart.
      without: { type: "string", default: "" },
    },
    allowPositionals: true,
    // `pnpm torture -- --seed 1` may hand the "--" on: options follow it.
    args: argv.filter((a, i) => !(i === 0 && a === "--")),
  });
  const hosts = Number(args.hosts);
  if (!Number.isInteger(hosts) || hosts < 1) throw new Error(`--hosts must be a whole number >= 1, not ${JSON.stringify(args.hosts)}`);
  if (hosts > 1 && args.attester === "harness") throw new Error("--hosts > 1 with --attester harness is not built (the harness's cgroup stack is one host's)");
  return {
    seed: args.seed !== undefined ? Number(args.seed) : Math.floor(Math.random() * 2 ** 31),
    minutes: Number(args.minutes),
    hosts,
    /** Workers per host. */
    workers: Number(args.workers ?? (hosts > 1 ? 2 : 3)),
    report: args.report,
    workspaces: Number(args.workspaces ?? (hosts > 1 ? 2 * hosts : 3)),
    slotsPerWorkspace: Number(args["slots-per-workspace"]),
    sharedSlots: Number(args["shared-slots"]),
    stopRate: Number(args["stop-rate"]),
    // No wake while the instance root is full or PostgreSQL restarts (unless asked for).
    holdWakes: !args["wake-in-fault-windows"],
    sharedArmRate: Number(args["shared-arm-rate"]),
    maxQueued: Number(args["max-queued"]),
    workerConcurrency: String(args["worker-concurrency"]),
    aimedKillShare: Number(args["aimed-kills"]),
    operator: !args["no-operator"],
    embedded: args.embedded === true,
    keep: args.keep === true,
    quietMs: Number(args["quiet-seconds"]) * 1000,
    idleTimeoutMs: Number(args["idle-timeout-ms"]),
    attester: attesterOf(String(args.attester)),
    provider: providerOf(String(args.provider)),
    without: String(args.without).split(",").map((k) => k.trim()).filter(Boolean),
  };
}

function attesterOf(value: string): "operator" | "harness" {
  if (value === "operator" || value === "harness") return value;
  throw new Error(`--attester must be operator or harness, not ${JSON.stringify(value)}`);
}

function providerOf(value: string): "local" | "daytona" {
  if (value === "local" || value === "daytona") return value;
  throw new Error(`--provider must be local or daytona, not ${JSON.stringify(value)}`);
}

export type TortureOptions = ReturnType<typeof parseOptions>;
