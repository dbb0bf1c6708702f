// Which reconciler passes are worth a log line. A sweep reports each unit it looked at by outcome;
// `left_*` outcomes mean it left the unit as it was (a held run the finalizer owns, an agent that
// survived its stop, a stop retention not yet due). A hold can stay open for days and the
// reconciler passes every few seconds, so logging every pass that only left things alone wrote
// the same line 17,000 times a day per held run (seen in a product walk, 2026-12-02). A pass is
// logged when a sweep acted or failed, or when what it leaves alone changed since the last
// logged pass (a newly held run, an agent that just survived, one that is gone), so an operator
// still sees each such state once.

export type PassOutcomes = Record<string, Record<string, number>>;

export interface PassLogDecision {
  log: boolean;
  /** The outcomes with at least one unit, as logged. */
  outcomes: PassOutcomes;
}

const isLeft = (outcome: string) => outcome.startsWith("left_");

export function createPassLogFilter(): (outcomes: PassOutcomes, errors: number) => PassLogDecision {
  let lastLeft = "[]"; // nothing left alone yet
  return (outcomes, errors) => {
    const nonEmpty = Object.entries(outcomes).filter(([, counts]) => Object.keys(counts).length > 0);
    const acted = nonEmpty.some(([, counts]) => Object.keys(counts).some((outcome) => !isLeft(outcome)));
    const left = JSON.stringify(
      nonEmpty
        .map(([sweep, counts]) => [sweep, Object.entries(counts).filter(([outcome]) => isLeft(outcome)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))] as const)
        .filter(([, counts]) => counts.length > 0)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    const leftChanged = left !== lastLeft;
    lastLeft = left;
    return { log: acted || errors > 0 || leftChanged, outcomes: Object.fromEntries(nonEmpty) };
  };
}
