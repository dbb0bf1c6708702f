// The attester: automatic attestation, only where the harness can prove it. Each reap of a
// leftover descendant and each attestation is an operation; a refused attestation (the product
// said no: nothing changed) is a fail, one whose answer was lost (a dropped connection, a restart)
// an info: the hold may or may not be attested.
import { attestOwnerStop } from "@copyback/core/recovery";
import { readOwnerUnverifiedEvidence } from "@copyback/core/records";
import { OWNER_UNVERIFIED } from "../checker/verdict";
import { errorFields, perform, signalAs } from "../perform";
import { alive } from "../procs";
import { COMPANY_ID } from "../world";
import { sleep, type Harness } from "./harness";

/**
 * The hold's recorded owner is a worker this harness started (PID and /proc start time), that
 * worker's exit was observed, /proc no longer shows that process, and every descendant it was last
 * seen with is gone too (agents that outlive their worker are killed first: the harness started
 * them, it knows them).
 */
export async function attesterLoop(h: Harness): Promise<void> {
  const { prisma, workers, history, state } = h;
  const reaped = new Set<string>();
  while (!state.stopping) {
    await sleep(500);
    if (state.pgDown) continue;
    try {
      const holds = await prisma.issueRecoveryAction.findMany({ where: { companyId: COMPANY_ID, cause: OWNER_UNVERIFIED, status: { in: ["active", "escalated"] } } });
      for (const hold of holds) {
        const evidence = readOwnerUnverifiedEvidence(hold.evidence);
        if (!evidence?.owner || !evidence.ownerToken || !hold.runId || !hold.issueId) continue;
        if (evidence.attestation) continue;
        const worker = workers.find(evidence.owner.pid, evidence.owner.processStart);
        if (!worker || !worker.exited || alive({ pid: worker.pid, start: worker.start })) continue;
        const leftovers = worker.lastDescendants.filter((d) => alive(d));
        if (leftovers.length > 0) {
          for (const d of leftovers) {
            const key = `${d.pid}:${d.start}`;
            if (reaped.has(key)) continue;
            reaped.add(key);
            signalAs(history.invoke("attester.reap", { pid: d.pid, of: worker.pid }), d.pid, "SIGKILL");
          }
          continue;
        }
        const stopEvidence = `torture harness: worker pid ${worker.pid} (start ${worker.start}) exited (observed by its parent), /proc shows no such process, and its ${worker.lastDescendants.length} last-seen descendants are gone`;
        const { runId, issueId } = hold;
        const { ownerToken } = evidence;
        await perform(
          history,
          "attest",
          { actionId: hold.id, runId, pid: worker.pid },
          () =>
            attestOwnerStop(prisma, {
              companyId: COMPANY_ID,
              issueId,
              actor: { type: "local_board", id: null },
              actionId: hold.id,
              runId,
              ownerToken,
              controllerAndCopybackStopped: true,
              stopEvidence,
            }),
          { answer: (answer) => ({ status: answer.status }) },
        );
      }
    } catch (error) {
      history.append("attester.error", { message: errorFields(error, 200).message });
    }
  }
}
