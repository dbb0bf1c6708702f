// `--attester harness`: the loop that replaces the operator attester (loops/attester.ts). It
// attests nothing: the workers' reconcilers obtain the harness's signed receipts themselves. It
// stands for the platform (which removes a dead deployment's processes) and for the observer:
//   - each worker's own cgroup is learnt from /proc while it lives;
//   - each unverified-owner hold is recorded (`harness.hold`) when first seen and whenever its
//     status changes, with the proof that resolved it (`harness_receipt`, an operator's, none);
//   - every other worker gets a leftover process placed in its group while it lives;
//   - the group of each hold's dead owner is sampled (`harness.group`, when its process count
//     changes), and what is left in it is killed (`harness.reap`) only after it has been seen
//     populated for REAP_DELAY_MS, so the reconcilers meet live groups (deployment_live) first.
// Each pass reads the holds before it samples the groups, and reaps only a group whose hold it has
// just read open: a takeover the checker could miss is one made between that read and the kill.
import path from "node:path";
import { OWNER_UNVERIFIED } from "../checker/verdict";
import { readOwnerUnverifiedEvidence } from "@copyback/core/records";
import { errorFields, signalAs } from "../perform";
import { sleep, type Harness } from "../loops/harness";
import { COMPANY_ID } from "../world";
import { groupPids, placeLeftover, workerGroupOf } from "./cgroups";
import type { StopHarness } from "./stop-harness";

export const REAP_DELAY_MS = 3_000;

export async function harnessWatchLoop(h: Harness, harness: StopHarness): Promise<void> {
  const { prisma, workers, history, state } = h;
  const groupOfWorker = new Map<string, string>();
  const holdStatus = new Map<string, string>();
  const lastCount = new Map<string, number>();
  const populatedSince = new Map<string, number>();
  const groupOfHold = new Map<string, string | null>();
  while (!state.stopping) {
    await sleep(500);
    for (const w of workers.all) {
      const key = `${w.pid}:${w.start}`;
      if (w.exited || groupOfWorker.has(key)) continue;
      const group = workerGroupOf(w.pid, harness.place);
      if (group) {
        groupOfWorker.set(key, group);
        harness.groups.add(group);
        history.append("harness.worker_group", { worker: w.index, pid: w.pid, group });
        // Every other worker gets a leftover in its group while it lives (as an orphaned tar that
        // outlives its worker would be): its kill then leaves a populated group, which the harness
        // must refuse (deployment_live) until the reap. Placed while the worker lives, so no
        // takeover of its holds can precede it.
        if ((w.index + w.generation) % 2 === 0) {
          const pid = placeLeftover(group);
          if (pid !== null) {
            harness.leftovers.add(pid);
            history.append("harness.leftover", { worker: w.index, pid, group });
          }
        }
      }
    }
    if (state.pgDown) continue;
    try {
      const holds = await prisma.issueRecoveryAction.findMany({ where: { companyId: COMPANY_ID, cause: OWNER_UNVERIFIED }, select: { id: true, runId: true, status: true, outcome: true, resolvedByType: true, evidence: true } });
      const dueGroups = new Map<string, string>();
      for (const hold of holds) {
        const evidence = readOwnerUnverifiedEvidence(hold.evidence);
        const owner = evidence?.owner;
        const worker = owner ? workers.find(owner.pid, owner.processStart) : undefined;
        // A worker killed before this loop learnt its group: the group its receipt names (while the
        // receipt is still the hold's owner's, i.e. before a takeover replaced it).
        const group = (worker ? groupOfWorker.get(`${worker.pid}:${worker.start}`) : undefined) ?? (hold.runId && evidence?.ownerToken ? await receiptGroup(h, harness, hold.runId, evidence.ownerToken, hold.id, groupOfHold) : null);
        // A takeover records its proof on the hold, which stays open until the commit: a line on
        // each change of status or of proof (seed 7's fake run: attested, then its copyback retried).
        const attestation = evidence?.attestation;
        const proof = attestation ? (attestation.proof?.kind ?? "operator") : null;
        // The harness's last refusal, for refusal_after_proof: a refusal written after the proof
        // tells Recovery details the hold is fenced while it is being restored.
        const check = evidence?.harnessCheck ?? null;
        const key = `${hold.status}:${proof}:${check?.checkedAt ?? ""}`;
        if (holdStatus.get(hold.id) !== key) {
          holdStatus.set(hold.id, key);
          history.append("harness.hold", {
            actionId: hold.id,
            runId: hold.runId,
            status: hold.status,
            outcome: hold.outcome,
            group,
            ownerPid: owner?.pid ?? null,
            proof,
            attestedAt: attestation?.attestedAt ?? null,
            check: check ? { code: check.code, checkedAt: check.checkedAt } : null,
            resolvedByType: hold.resolvedByType,
          });
        }
        if (group && worker && !groupOfWorker.has(`${worker.pid}:${worker.start}`)) groupOfWorker.set(`${worker.pid}:${worker.start}`, group);
        if (group && worker?.exited && !proof && (hold.status === "active" || hold.status === "escalated")) dueGroups.set(group, hold.id);
      }
      for (const group of new Set([...groupOfWorker.values()].filter((g) => dueGroups.has(g) || lastCount.has(g)))) {
        const pids = groupPids(group);
        const count = pids?.length ?? -1;
        if (lastCount.get(group) !== count) {
          lastCount.set(group, count);
          history.append("harness.group", { group, procs: count, pids: (pids ?? []).slice(0, 20) });
        }
        if (!pids || pids.length === 0 || !dueGroups.has(group)) {
          populatedSince.delete(group);
          continue;
        }
        const since = populatedSince.get(group) ?? Date.now();
        populatedSince.set(group, since);
        if (Date.now() - since < REAP_DELAY_MS) continue;
        for (const pid of pids) signalAs(history.invoke("harness.reap", { pid, group, actionId: dueGroups.get(group) }), pid, "SIGKILL");
      }
    } catch (error) {
      history.append("harness.watch_error", { message: errorFields(error, 200).message });
    }
  }
}

/** The worker group the run's owner receipt names, when that receipt is still the hold's owner's (its token); remembered per hold. */
async function receiptGroup(h: Harness, harness: StopHarness, runId: string, ownerToken: string, actionId: string, memo: Map<string, string | null>): Promise<string | null> {
  if (memo.has(actionId)) return memo.get(actionId) ?? null;
  const run = await h.prisma.heartbeatRun.findUnique({ where: { id: runId }, select: { runnerProfileJson: true } });
  const receipt = (run?.runnerProfileJson as { nativeWorkspaceFinalizationOwner?: { token?: string; platform?: { kind?: string; path?: string } } } | null)?.nativeWorkspaceFinalizationOwner;
  const group = receipt?.token === ownerToken && receipt.platform?.kind === "worker_cgroup" && receipt.platform.path ? path.join(harness.place.mountPoint, receipt.platform.path) : null;
  // Only a definite answer is remembered: a receipt already replaced says nothing more later.
  memo.set(actionId, group);
  if (group) harness.groups.add(group);
  return group;
}
