// `--provider daytona`: the Daytona emulator (packages/core/test/support/daytona, a test tool the
// product never registers) served from the torture process, its sandboxes' files under the run's
// work directory, its clock advanced by real time each second (so Daytona's own auto-archive and
// auto-delete timers fire as they would). The workers reach it through their environments' config
// (apiUrl) and the key in DAYTONA_TORTURE_KEY. What Daytona does is written to the history as plain
// observations, for the checker's Daytona rules (checker/daytona-rules.ts):
//   daytona.act    a lifecycle call (start, stop, archive, delete) with the sandbox's state and
//                  auto-delete interval at that moment (R-DT-1: a stop with auto-delete enabled);
//   daytona.state  a state change: `settle` (a call's transitional state settling), `timer`
//                  (Daytona's own auto-stop/archive/delete) or `nemesis` (a change behind the back);
//   daytona.fault_hit  an armed fault met by a call.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { manualClock } from "../../../packages/core/test/support/daytona/clock";
import { startDaytonaEmulator, type DaytonaEmulator } from "../../../packages/core/test/support/daytona/emulator";
import type { FaultSpec } from "../../../packages/core/test/support/daytona/faults";
import type { SandboxRecord } from "../../../packages/core/test/support/daytona/sandboxes";
import type { SandboxState } from "../../../packages/core/test/support/daytona/state-machine";
import type { History } from "../history";

/** The variable the workers' Daytona environments name (config apiKeyEnv); the emulator's key is in it. */
export const DAYTONA_KEY_VARIABLE = "DAYTONA_TORTURE_KEY";
const LEASE_LABEL = "copyback.lease";
const TRANSITIONAL = new Set<SandboxState>(["creating", "starting", "stopping", "archiving", "destroying"]);

/** One sandbox as the emulator holds it at the end (collect.ts). */
export interface DaytonaSandboxFinal {
  id: string;
  leaseId: string | null;
  state: string;
  autoDeleteInterval: number;
}

/** A fault as the nemesis arms it: how long a hang holds, or a never-confirming stop stays stuck. */
export type ArmedFault = FaultSpec & { holdMs?: number };

export interface TortureEmulator {
  emulator: DaytonaEmulator;
  /** Arms a fault for the next matching call. */
  arm(spec: ArmedFault): void;
  /** A sandbox Daytona changes behind the controller's back (the nemesis's archive / auto-delete). */
  behindBack(record: SandboxRecord, change: "archive" | "delete"): void;
  /** Quiet period: armed faults dropped, held calls answered, stuck stops confirmed. */
  quiet(): void;
  finalSandboxes(): DaytonaSandboxFinal[];
  close(): Promise<void>;
}

const leaseOf = (record: SandboxRecord) => record.labels[LEASE_LABEL] ?? null;

export async function startTortureEmulator(workDir: string, history: History): Promise<TortureEmulator> {
  const root = path.join(workDir, "daytona");
  mkdirSync(root, { recursive: true });
  const clock = manualClock(Date.now());
  // 200 ms per transitional state: a stop or a start is seen `stopping` / `starting` by the polls.
  const emulator = await startDaytonaEmulator({ root, clock, settleMs: 200 });
  const ticker = setInterval(() => clock.advance(Math.max(0, Date.now() - clock.now())), 1000);
  const { sandboxes, faults } = emulator;
  const at = () => new Date().toISOString();
  let behind: "archive" | "delete" | null = null;
  const stuckTimers = new Set<NodeJS.Timeout>();

  // Observations: every lifecycle call and state change, with the auto-delete interval then.
  const act = sandboxes.act.bind(sandboxes);
  sandboxes.act = (record, action, confirm = true) => {
    const line = { sandboxId: record.id, leaseId: leaseOf(record), action, from: record.state, autoDeleteInterval: record.autoDeleteInterval, confirm, at: at() };
    try {
      act(record, action, confirm);
    } catch (error) {
      history.append("daytona.act", { ...line, refused: (error as { status?: number }).status ?? null });
      throw error;
    }
    history.append("daytona.act", { ...line, to: record.state });
  };
  const force = sandboxes.force.bind(sandboxes);
  sandboxes.force = (record, state, atMs) => {
    const from = record.state;
    const by = behind ? "nemesis" : TRANSITIONAL.has(from) ? "settle" : "timer";
    force(record, state, atMs);
    history.append("daytona.state", { sandboxId: record.id, leaseId: leaseOf(record), from, to: state, by, autoDeleteInterval: record.autoDeleteInterval, at: at() });
  };

  // Faults: each hit recorded; a hang holds for its own time (not until the next release of all
  // hangs); a stop that never confirms is confirmed, late, after its own time.
  let nextHoldMs = 10_000;
  const take = faults.take.bind(faults);
  faults.take = (op, sandboxId) => {
    const fault = take(op, sandboxId) as ArmedFault | undefined;
    if (!fault) return fault;
    history.append("daytona.fault_hit", { op, sandboxId: sandboxId ?? null, kind: fault.kind, at: at() });
    if (fault.kind === "hang") nextHoldMs = fault.holdMs ?? 10_000;
    if (fault.kind === "never_confirms" && sandboxId) {
      const timer = setTimeout(() => {
        stuckTimers.delete(timer);
        confirmLate(sandboxId);
      }, fault.holdMs ?? 30_000);
      stuckTimers.add(timer);
    }
    return fault;
  };
  const hold = faults.hold.bind(faults);
  faults.hold = () => {
    const ms = nextHoldMs;
    return Promise.race([hold(), new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
  };
  const confirmLate = (sandboxId: string) => {
    const record = sandboxes.records.get(sandboxId);
    if (!record?.stuck) return;
    record.stuck = false;
    if (record.state === "stopping") sandboxes.force(record, "stopped");
    else if (record.state === "destroying") sandboxes.force(record, "destroyed");
  };

  return {
    emulator,
    arm: (spec) => faults.once(spec),
    behindBack(record, change) {
      behind = change;
      try {
        if (change === "archive") emulator.archiveBehindBack(record.id);
        else emulator.deleteBehindBack(record.id);
      } finally {
        behind = null;
      }
    },
    quiet() {
      faults.clear();
      faults.releaseHangs();
      for (const timer of stuckTimers) clearTimeout(timer);
      stuckTimers.clear();
      for (const record of sandboxes.records.values()) if (record.stuck) confirmLate(record.id);
    },
    finalSandboxes: () => [...sandboxes.records.values()].map((r) => ({ id: r.id, leaseId: leaseOf(r), state: r.state, autoDeleteInterval: r.autoDeleteInterval })),
    async close() {
      clearInterval(ticker);
      for (const timer of stuckTimers) clearTimeout(timer);
      await emulator.close();
    },
  };
}
