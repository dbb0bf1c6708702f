// The clients: keep every slot busy with runs queued through core's wakeAgent; fake runs get fresh
// faults, shared runs transient export faults, and a share of the runs a Stop racing the agent's
// finish. Each wake, fault arming and Stop is a history operation (invoke, then ok / fail / info).
import { SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent, stopRun } from "@copyback/core/runs";
import { FILE_RECOVERY } from "../checker/verdict";
import { errorFields, perform } from "../perform";
import { COMPANY_ID, type Slot } from "../world";
import { sleep, type Harness } from "./harness";

const ACQUIRE_BACKOFF_MS = 5_000;

const FAKE_FAULTS: Array<[string, Record<string, unknown>]> = [
  ["provider:fail:exportWorkspace", { fail: { exportWorkspace: 2 } }],
  ["provider:loseReply:exportWorkspace", { loseReply: { exportWorkspace: 1 } }],
  ["provider:hang:exportWorkspace", { hang: { exportWorkspace: 1 } }],
  ["provider:unconfirmedStop", { unconfirmedStop: 1 }],
  ["provider:loseReply:destroy", { loseReply: { destroy: 1 } }],
  ["provider:fail:exec", { fail: { exec: 1 } }],
  ["provider:loseReply:exec", { loseReply: { exec: 1 } }],
];

export async function clientLoop(h: Harness): Promise<void> {
  const { world, history, state } = h;
  // A slot whose run failed at acquisition waits until then (driveSlot).
  const backoff = new Map<string, number>();
  let pass = 0;
  while (state.chaos) {
    // Every slot in turn, from a different one each pass: with at most `--max-queued` runs queued
    // (driveSlot), a fixed order gave the first slots every wake. (Before the queue bound the
    // shared slots went first in every pass, so they were woken soonest after a shared export
    // failed and released its lease; in turn they still make 6 of the 15 live slots.)
    const turn = world.slots.length === 0 ? 0 : pass++ % world.slots.length;
    for (const slot of [...world.slots.slice(turn), ...world.slots.slice(0, turn)]) {
      if (!state.chaos) break;
      if (slot.retired) continue;
      // No wake while the instance root is full or PostgreSQL restarts: a run queued into that
      // window failed at acquisition (ENOSPC, SQLITE_FULL, provider_acquire_failed) before its
      // agent ran. The runs already in flight still meet the window.
      if (h.options.holdWakes && (state.disk !== null || state.pgDown)) break;
      try {
        await driveSlot(h, slot, backoff);
      } catch (error) {
        history.append("client.error", { slot: slot.slot, message: errorFields(error).message });
      }
    }
    await sleep(300);
  }
}

async function driveSlot(h: Harness, slot: Slot, backoff: Map<string, number>): Promise<void> {
  const { prisma, world, history } = h;
  const clientRng = h.draws.client;
  if (slot.currentRun) {
    const run = await prisma.heartbeatRun.findUnique({
      where: { id: slot.currentRun },
      select: { status: true, errorCode: true, createdAt: true, startedAt: true, finishedAt: true, results: { where: { schemaStatus: "accepted" }, select: { createdAt: true }, take: 1 }, finalization: { select: { committedAt: true } } },
    });
    if (run && (run.status === "queued" || run.status === "running")) return;
    // The run's times: how long its turn and its finalization took (workload-figures.ts).
    const times = run ? { createdAt: run.createdAt, startedAt: run.startedAt, acceptedAt: run.results[0]?.createdAt ?? null, committedAt: run.finalization?.committedAt ?? null, finishedAt: run.finishedAt } : {};
    history.append("client.observed", { slot: slot.slot, runId: slot.currentRun, status: run?.status, errorCode: run?.errorCode, ...times });
    slot.currentRun = null;
    // A run that failed at acquisition is re-woken only after the fault windows that cause it (a
    // full disk for 1.5-4 s, a PostgreSQL restart, a terminated connection) are over. Re-woken
    // every 300 ms, every slot's runs failed one after another inside each window: 1,175 of 1,818
    // runs of a 30-minute run, with the same faults (worker logs: ENOSPC, "Can't reach database
    // server", 57P03 inside acquireLease).
    if (run?.errorCode === "provider_acquire_failed") backoff.set(slot.slot, Date.now() + ACQUIRE_BACKOFF_MS);
  }
  if ((backoff.get(slot.slot) ?? 0) > Date.now()) return;
  const holds = await prisma.issueRecoveryAction.findMany({ where: { issueId: slot.issueId, status: { in: ["active", "escalated"] } }, select: { id: true, cause: true } });
  if (holds.some((a) => a.cause === FILE_RECOVERY)) {
    // R-FO-1: a run that failed before its result holds its task until an operator recovers its
    // files (nobody does here): the slot is retired and replaced on the same workspace, so the
    // load goes on while the held sandbox stays exactly as it is for the checker.
    slot.retired = true;
    history.append("slot.retired", { slot: slot.slot, reason: "file_recovery_obligation", actionId: holds.find((a) => a.cause === FILE_RECOVERY)?.id });
    await world.createSlot(world.workspaces.findIndex((w) => w.id === slot.workspaceId), slot.kind, slot.sharedEnvironmentId);
    return;
  }
  if (holds.length > 0) return;
  // A lease of this slot's environment outlived its run (a violation the checker reports, R-FO-1;
  // kept so one such bug does not stall the run): the next run would wait for it forever, so the
  // slot is retired and replaced on the same workspace.
  // (A shared environment's leases are told apart by their task.)
  const stuck = await prisma.environmentLease.findFirst({
    where: { environmentId: slot.environmentId, status: "active", run: { status: { notIn: ["queued", "running"] } }, ...(slot.sharedEnvironmentId ? { issueId: slot.issueId } : {}) },
    select: { id: true, status: true, runId: true },
  });
  if (stuck) {
    slot.retired = true;
    history.append("slot.retired", { slot: slot.slot, leaseId: stuck.id, leaseStatus: stuck.status, runId: stuck.runId });
    await world.createSlot(world.workspaces.findIndex((w) => w.id === slot.workspaceId), slot.kind, slot.sharedEnvironmentId);
    return;
  }
  // At most `--max-queued` runs wait in the queue, counted before each wake (a pass over every
  // slot takes seconds on a loaded machine). With every idle slot woken at once, a loaded
  // machine's queue held 14 s of runs, and inside each full-disk window one worker claimed and
  // failed them one after another (6 to 9 ENOSPC acquisitions in 2 s; seed 1, load 14): runs
  // beyond what the workers take soon only waited to meet the next fault window.
  if ((await prisma.heartbeatRun.count({ where: { companyId: COMPANY_ID, status: "queued" } })) >= h.options.maxQueued) return;
  let faultKind: string | null = null;
  let config: object | null = null;
  if (slot.kind === "fake") {
    let faults: Record<string, unknown> = {};
    if (clientRng.next() < 0.7) {
      const [kind, f] = clientRng.pick(FAKE_FAULTS);
      faultKind = kind;
      faults = f;
    }
    config = world.fakeConfig(slot.dir, faults);
  } else if (slot.sharedEnvironmentId && slot.kind === "local") {
    // Export faults that are transient for some tries, then clear, on the shared environment's
    // next allocation (the config is read when a lease is allocated; a reused lease keeps the
    // count its allocation armed). 3 fails tries of the live attempt, which then succeeds
    // in-process or leaves it retryable_failure; 8 outlasts the live attempt's tries, so the
    // reconciler's retry path (30 s later, in whichever worker) commits it or spends the budget.
    // Armed on every wake (was 4 of 5, and 1 of 2 before): only a new allocation takes the count,
    // and most shared acquisitions reuse a warm sandbox, so this is what makes such a failure
    // frequent; the queue bound and one run per worker leave fewer shared wakes a minute (seed 2,
    // 3 minutes: 18.4 armed a minute, 27.3 before).
    const failExports = clientRng.next() < h.options.sharedArmRate ? clientRng.pick([3, 8]) : null;
    if (failExports) faultKind = `provider:local:failExports:${failExports}`;
    config = world.localConfig(failExports);
  }
  if (config !== null) {
    const write = () => prisma.environment.update({ where: { id: slot.environmentId }, data: { config: config as object } });
    // Arming a fault is a fault operation of its own: the environment's config written or not.
    if (faultKind) {
      const armed = await perform(history, "fault", { kind: faultKind, slot: slot.slot, environmentId: slot.environmentId }, write);
      if (!armed.ok) return;
    } else await write();
  }
  const woken = await perform(
    history,
    "client.wake",
    { slot: slot.slot, kind: slot.kind, workspace: slot.workspace, dir: slot.dir, shared: slot.sharedEnvironmentId !== null, ...(faultKind ? { armed: faultKind } : {}) },
    () => wakeAgent(prisma, { companyId: COMPANY_ID, issueId: slot.issueId, actor: SYSTEM_ACTOR, reason: "torture" }),
    { answer: (w) => ({ runId: w.runId, created: w.created }) },
  );
  // Refused, or unknown (a run may have been queued): the next pass reads the task again.
  if (!woken.ok) return;
  slot.currentRun = woken.value.runId;
  if (faultKind === "provider:local:failExports:8") h.kills.armedToRetry.add(woken.value.runId);
  if (woken.value.created && clientRng.next() < h.options.stopRate) scheduleStop(h, woken.value.runId, slot.slot, Math.round(clientRng.between(0, 3_000)));
}

/**
 * A Stop (core's stop service, as the task's Stop button sends it) racing the agent's finish: once
 * the run is seen running (polled every 100 ms, for at most a minute), `delayMs` later: while the
 * agent works, just as it finishes (its result published while the worker reads the stop), or
 * after the run ended (a refusal, 409 run_not_active). Each Stop is an operation; its answer is the
 * completion.
 */
function scheduleStop(h: Harness, runId: string, slot: string, delayMs: number): void {
  const task = (async () => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const run = await h.prisma.heartbeatRun.findUnique({ where: { id: runId }, select: { status: true } }).catch(() => null);
      if (run && run.status !== "queued") break;
      await sleep(100);
    }
    await sleep(delayMs);
    await perform(h.history, "client.stop", { runId, slot, delayMs }, () => stopRun(h.prisma, { companyId: COMPANY_ID, runId, actor: { type: "local_board", id: null } }), {
      answer: (outcome) => ({ outcome: outcome.kind }),
    });
  })();
  h.background.add(task);
  void task.finally(() => h.background.delete(task));
}
