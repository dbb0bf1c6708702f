// The checker's rules for `--attester harness` (issue 22 part 4), read from the history lines of
// harness-mode/watch-loop.ts; a history without them (every other mode) gives nothing. Pure.
//   - takeover_while_group_live (R-RW-3): a hold taken over through a harness receipt whose dead
//     owner's group was seen holding a process AFTER the takeover was observed. No process can
//     enter a dead worker's group, so that process lived when the takeover was made.
//   - harness_takeover_missing (R-RW-2, R-RW-3): a hold still open at the end whose owner's group
//     was last seen empty: the harness could sign, so no operator attestation should be needed.
//   - refusal_after_proof (R-RW-3, R-UI-1): a harness refusal recorded on a hold after its stop
//     was proven: Recovery details and the run log then say the copyback is fenced for an
//     operator while it is being restored (seed 7: a second worker's pass over the same hold,
//     refused owner_changed once the first pass's takeover had replaced the receipt).
import type { HistoryEvent } from "../history";
import type { FinalState } from "./final-state";
import { OPEN, OWNER_UNVERIFIED, type Violation } from "./verdict";

interface HoldLine {
  actionId: string;
  runId: string | null;
  status: string;
  group: string | null;
  proof: string | null;
  attestedAt?: string | null;
  check?: { code: string; checkedAt: string } | null;
}

const holdLines = (history: readonly HistoryEvent[]) => history.filter((e) => e.ev === "harness.hold").map((e) => ({ t: BigInt(e.t), ...(e as unknown as HoldLine) }));

export function harnessTakeoverViolations(history: readonly HistoryEvent[], final: Pick<FinalState, "actions">): Violation[] {
  const violations: Violation[] = [];
  const holds = holdLines(history);
  const samples = history.filter((e) => e.ev === "harness.group").map((e) => ({ t: BigInt(e.t), group: String(e.group), procs: Number(e.procs) }));
  for (const h of holds) {
    // The proof is recorded when the takeover is made, before the commit resolves the hold.
    if (h.proof !== "harness_receipt" || !h.group) continue;
    if (holds.some((o) => o.actionId === h.actionId && o.proof === "harness_receipt" && o.t < h.t)) continue;
    const live = samples.find((s) => s.group === h.group && s.t > h.t && s.procs > 0);
    if (live) violations.push({ kind: "takeover_while_group_live", detail: `hold ${h.actionId} was taken over through a harness receipt, yet its dead owner's group ${h.group} held ${live.procs} process(es) afterwards`, ...(h.runId ? { runId: h.runId } : {}) });
  }
  const lastOfHold = new Map<string, HoldLine>();
  for (const h of holds) lastOfHold.set(h.actionId, h);
  for (const h of lastOfHold.values()) {
    if (!h.attestedAt || !h.check || Date.parse(h.check.checkedAt) <= Date.parse(h.attestedAt)) continue;
    violations.push({ kind: "refusal_after_proof", detail: `hold ${h.actionId} records the harness refusal ${h.check.code} at ${h.check.checkedAt}, after its stop was proven at ${h.attestedAt}`, ...(h.runId ? { runId: h.runId } : {}) });
  }
  for (const a of final.actions) {
    if (a.cause !== OWNER_UNVERIFIED || !OPEN.has(a.status)) continue;
    const line = lastOfHold.get(a.id);
    const group = line?.group;
    // Attested (by the harness) and still open: the takeover was made; what follows is the
    // finalization's, judged by check.ts (seed 7: a fake run's sandbox lost with its worker).
    if (!group || line.proof) continue;
    const last = samples.filter((s) => s.group === group).at(-1);
    if (last && last.procs === 0) violations.push({ kind: "harness_takeover_missing", detail: `hold ${a.id} is still open at the end although its dead owner's group ${group} was last seen empty: the harness could sign its stop`, ...(a.runId ? { runId: a.runId } : {}) });
  }
  return violations;
}

/** How the holds the watch loop saw were resolved: by a harness receipt, by an operator's attestation (open or resolved since), or otherwise (superseded...), or not at all. */
export function holdResolutions(history: readonly HistoryEvent[]): { harnessReceipt: number; operatorAttestation: number; otherwise: number; openAtLastLook: number } {
  const last = new Map<string, HoldLine>();
  for (const h of holdLines(history)) last.set(h.actionId, h);
  const counts = { harnessReceipt: 0, operatorAttestation: 0, otherwise: 0, openAtLastLook: 0 };
  for (const h of last.values()) {
    if (h.proof === "harness_receipt") counts.harnessReceipt += 1;
    else if (h.proof === "operator") counts.operatorAttestation += 1;
    else if (OPEN.has(h.status)) counts.openAtLastLook += 1;
    else counts.otherwise += 1;
  }
  return counts;
}
