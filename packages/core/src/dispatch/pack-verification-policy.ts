// R-PV-1: the agent-pack verification policy, pure (the reads themselves are
// verify-agent-pack.ts). What one read proves, and what the run does next:
//   - a read that did not complete proves nothing about the pack: a timeout (the 30 s transport
//     timeout, or the provider's own), a signal, a missing exit status, a transport exception
//     (the exec or the placement threw), or an answer that is not the report the command prints.
//     It is INCONCLUSIVE: retried at most once; the second inconclusive read holds the run with
//     runner_remote_provider_verification_unavailable.
//   - a completed read that proves the pack unusable: a nonzero exit, a digest other than the
//     controller's own copy's, a version other than the agent's pinned one. It is INCOMPATIBLE and
//     never authorizes a turn: the run fails with the reason's code, no agent is started.
//   - a completed read with the expected digest and version: VERIFIED, the turn may start.
// The budget is the run's (records/agent-pack-verification.ts): a reattachment continues it, so a
// run that spent one inconclusive read gets exactly one more, and a spent (or unreadable) budget
// holds the run before any read. Only an operator's reverify renews it.

/** Inconclusive reads a run may spend before it is held (the first one is retried once). */
export const MAX_INCONCLUSIVE_READS = 2;
/** Each read's transport timeout. */
export const PACK_READ_TIMEOUT_MS = 30_000;

/** What the controller saw of one read (the exec's answer, or why there was none). */
export type ReadObservation =
  | { kind: "exec"; exitCode: number | null; signal: string | null; timedOut: boolean; cancelled: boolean; stdout: string }
  /** The read's transport timeout fired before the provider answered. */
  | { kind: "transport_timeout" }
  /** The exec (or the pack's placement) threw: a transport or provider exception. */
  | { kind: "threw"; message: string }
  /** A Stop ended the read: not a verification outcome at all. */
  | { kind: "stopped" };

export interface PackExpectation {
  /** The tree digest of the controller's host copy. */
  digest: string;
  /** The runtime version the agent's configuration pins. */
  version: string;
}

export type InconclusiveReason = "timeout" | "signal" | "no_exit_status" | "transport_error" | "malformed_report";
export type IncompatibleReason = "nonzero_exit" | "digest_mismatch" | "wrong_version";

export type ReadVerdict =
  | { outcome: "verified"; reason: "verified"; detail: string }
  | { outcome: "inconclusive"; reason: InconclusiveReason; detail: string }
  | { outcome: "incompatible"; reason: IncompatibleReason; detail: string };

/** A report as VERIFY_SCRIPT prints it, parsed by the caller (pack-format.ts parseVerifyReport). */
export type ParsedReport = { digest: string; version: string } | null;

export function classifyRead(observation: ReadObservation, report: ParsedReport, expected: PackExpectation): ReadVerdict | { outcome: "stopped" } {
  switch (observation.kind) {
    case "stopped":
      return { outcome: "stopped" };
    case "transport_timeout":
      return { outcome: "inconclusive", reason: "timeout", detail: `No answer within the ${PACK_READ_TIMEOUT_MS / 1000} s transport timeout.` };
    case "threw":
      return { outcome: "inconclusive", reason: "transport_error", detail: observation.message };
    case "exec":
      break;
  }
  if (observation.cancelled) return { outcome: "stopped" };
  if (observation.timedOut) return { outcome: "inconclusive", reason: "timeout", detail: "The provider ended the read at its timeout." };
  if (observation.signal !== null) return { outcome: "inconclusive", reason: "signal", detail: `The read was killed by ${observation.signal}.` };
  if (observation.exitCode === null) return { outcome: "inconclusive", reason: "no_exit_status", detail: "The provider reported no exit status." };
  if (observation.exitCode !== 0) return { outcome: "incompatible", reason: "nonzero_exit", detail: `The verification command exited with code ${observation.exitCode} (${NONZERO_WORDS[observation.exitCode] ?? "it failed"}).` };
  // Exit 0 without the report: the command completed, but what came back is not its answer (a cut
  // stream); that proves nothing about the pack either way.
  if (report === null) return { outcome: "inconclusive", reason: "malformed_report", detail: "The read completed but its report could not be read." };
  if (report.digest !== expected.digest) return { outcome: "incompatible", reason: "digest_mismatch", detail: `The sandbox's pack hashes to ${report.digest}, not ${expected.digest}.` };
  if (report.version !== expected.version) return { outcome: "incompatible", reason: "wrong_version", detail: `The runtime reports version ${JSON.stringify(report.version)}, not ${JSON.stringify(expected.version)}.` };
  return { outcome: "verified", reason: "verified", detail: `Version ${expected.version}, digest ${expected.digest}.` };
}

// VERIFY_SCRIPT's exit codes (pack-format.ts).
const NONZERO_WORDS: Readonly<Record<number, string>> = {
  3: "the pack's directory is missing in the sandbox",
  4: "a file of the pack could not be hashed",
  5: "the runtime's version command failed",
};

/** The budget as the run records it. */
export interface PackBudget {
  inconclusive: number;
  /** An unreadable record: it grants nothing. */
  malformed: boolean;
}

export type PackStep = { kind: "read" } | { kind: "verified" } | { kind: "incompatible"; reason: IncompatibleReason; detail: string } | { kind: "hold" };

/** Before a read: a spent or unreadable budget holds the run without reading (a reattachment renews nothing). */
export function decideBeforeRead(budget: PackBudget): PackStep {
  return budget.malformed || budget.inconclusive >= MAX_INCONCLUSIVE_READS ? { kind: "hold" } : { kind: "read" };
}

/** After a read is recorded (`budget` already counts it). */
export function decideAfterRead(budget: PackBudget, verdict: ReadVerdict): PackStep {
  if (verdict.outcome === "verified") return { kind: "verified" };
  if (verdict.outcome === "incompatible") return { kind: "incompatible", reason: verdict.reason, detail: verdict.detail };
  return decideBeforeRead(budget);
}

/**
 * The controller's own copy against the agent's configuration, before anything is placed: a
 * manifest of another version, or a pinned digest the host copy does not have, is incompatible
 * (no read is spent on a pack that cannot be the right one).
 */
export function decideHostPack(pinned: { version: string; sha256?: string | undefined }, host: { version: string; digest: string }): PackStep {
  if (host.version !== pinned.version) {
    return { kind: "incompatible", reason: "wrong_version", detail: `The agent pack's manifest says version ${JSON.stringify(host.version)}; the agent needs ${JSON.stringify(pinned.version)}.` };
  }
  if (pinned.sha256 !== undefined && pinned.sha256 !== host.digest) {
    return { kind: "incompatible", reason: "digest_mismatch", detail: `The agent pack on the controller hashes to ${host.digest}, not the pinned ${pinned.sha256}.` };
  }
  return { kind: "read" };
}

/** The run's failure code of an incompatible pack (stable, shown on the run). */
export const INCOMPATIBLE_CODES: Readonly<Record<IncompatibleReason, string>> = {
  nonzero_exit: "agent_pack_incompatible",
  digest_mismatch: "agent_pack_digest_mismatch",
  wrong_version: "agent_pack_wrong_version",
};
