// The counts of a verdict that the history's operations give (through their one reader,
// operations.ts: an info is counted apart, never as ok or as fail), and the table printed at the
// end of every run. Pure.
import { completionsByFunction, faultsOf, happened, type Operation } from "./operations";
import { bump, VIOLATION_KINDS, type Verdict } from "./verdict";

/** What the operations count: the faults, attestations and Stops that took effect or were refused, and every function's completions. */
export function operationCounts(operations: readonly Operation[]): Pick<Verdict["counts"], "faultsByKind" | "faults" | "faultsIndeterminate" | "attestations" | "stopsByOutcome" | "operations"> {
  const faults = faultsOf(operations);
  const stopsByOutcome: Record<string, number> = {};
  let attestations = 0;
  for (const op of operations) {
    if (op.f === "attest" && happened(op) && op.value.status === "attested") attestations += 1;
    // A Stop that took effect by its outcome, a refused one by its code, an unknown one as info.
    if (op.f === "client.stop") bump(stopsByOutcome, op.outcome === "ok" ? String(op.value.outcome) : op.outcome === "fail" ? String(op.value.code ?? "refused") : "info");
  }
  return {
    faultsByKind: faults.byKind,
    faults: Object.values(faults.byKind).reduce((a, b) => a + b, 0),
    faultsIndeterminate: faults.indeterminate,
    attestations,
    stopsByOutcome,
    operations: completionsByFunction(operations),
  };
}

/** The counts table printed at the end of every run. */
export function formatCounts(verdict: Verdict, header: Record<string, string> = {}): string {
  const rows: [string, string][] = [];
  for (const [k, v] of Object.entries(header)) rows.push([k, v]);
  const c = verdict.counts;
  rows.push(["runs", String(c.runs)]);
  for (const [k, v] of Object.entries(c.runsByStatus).sort()) rows.push([`  runs ${k}`, String(v)]);
  rows.push(["accepted results", String(c.acceptedResults)]);
  rows.push(["commits", String(c.commits)]);
  rows.push(["holds (opened, by cause)", Object.keys(c.holdsByCause).length ? "" : "0"]);
  for (const [k, v] of Object.entries(c.holdsByCause).sort()) rows.push([`  ${k}`, `${v} (open at end ${c.openHoldsByCause[k] ?? 0})`]);
  rows.push(["attestations (automatic)", String(c.attestations)]);
  rows.push(["merge intervals observed", String(c.mergeIntervals)]);
  rows.push(["lease reuses", String(c.reuses)]);
  rows.push(["leases released while their finalization was unsettled", String(c.unsettledReleases)]);
  rows.push(["  acquisitions on that environment and workspace meanwhile", String(c.acquisitionsBesideUnsettled)]);
  rows.push(["  of them handed a held lease (held_lease_taken)", String(c.heldLeaseTaken)]);
  rows.push(["stop requests (by answer)", Object.keys(c.stopsByOutcome).length ? "" : "0"]);
  for (const [k, v] of Object.entries(c.stopsByOutcome).sort()) rows.push([`  ${k}`, String(v)]);
  rows.push(["retained sandboxes discarded by the operator", String(c.operatorDiscards)]);
  rows.push(["faults injected", String(c.faults)]);
  for (const [k, v] of Object.entries(c.faultsByKind).sort()) rows.push([`  ${k}`, String(v)]);
  rows.push(["faults of unknown outcome (info)", String(c.faultsIndeterminate)]);
  rows.push(["operations (ok / fail / info)", Object.keys(c.operations).length ? "" : "0"]);
  for (const [f, n] of Object.entries(c.operations).sort()) rows.push([`  ${f}`, `${n.ok} / ${n.fail} / ${n.info}`]);
  rows.push(["relaxed (not violations)", Object.keys(c.relaxed).length ? "" : "0"]);
  for (const [k, v] of Object.entries(c.relaxed).sort()) rows.push([`  ${k}`, String(v)]);
  if (c.hosts) {
    rows.push(["two hosts: host kills / returns", `${c.hosts.hostKills} / ${c.hosts.hostReturns}`]);
    rows.push(["  runs that waited for their dead host, then ran on it", String(c.hosts.waitedForDeadHost)]);
    rows.push(["  claims / sweep units traced (by host)", `${c.hosts.claimsTraced} / ${c.hosts.sweepUnitsTraced}`]);
  }
  rows.push(["violations", String(verdict.violations.length)]);
  for (const kind of VIOLATION_KINDS) rows.push([`  ${kind}`, String(c.violationsByKind[kind] ?? 0)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n");
}
