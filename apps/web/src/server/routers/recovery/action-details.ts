// "Recovery details" of one open recovery action (R-UI-2), in two layers:
//   - diagnostics, for `runtime:manage`: cause, age, status, next action, run and lease ids,
//     phase and reason in words;
//   - operator guidance, for `runtime:confirm_owner_stop` only: the owner token, the exact
//     attestation API call and the spec's maintenance SQL with its placeholders filled.
// Neither layer ever carries the recorded controller's process id or host name (R-UI-1): the
// evidence is read through core's schema and only the fields named here are copied out; the
// procedure's output schema strips anything else.
import { z } from "zod";
import {
  attestationTokenOf,
  OPEN_RECOVERY_ACTION_STATUSES,
  readCopybackFailedEvidence,
  readExportLimitEvidence,
  readFileRecoveryEvidence,
  readFilesGivenUp,
  readLegacyRepairEvidence,
  readOwnerUnverifiedEvidence,
  readPackVerificationUnavailableEvidence,
  PACK_VERIFICATION_UNAVAILABLE_CAUSE,
  type OwnerUnverifiedEvidence,
} from "@copyback/core/records";
import {
  RESOLVABLE_CAUSES,
  type OpenActionRow,
  type ReconstructionDeferral,
  attestationCall,
  maintenanceSql,
} from "@copyback/core/recovery";
import { causeInWords, packReadInWords, phaseInWords, reasonInWords, stopProofInWords } from "./recovery-words";
import { exportHoldSchema, type ExportHold } from "./export-hold";

export const operatorGuidanceSchema = z.object({
  /** null when the receipt was malformed: there is no token to name, so no call can be prefilled. */
  ownerToken: z.string().nullable(),
  apiCall: z
    .object({
      method: z.literal("POST"),
      url: z.string(),
      body: z.object({
        actionId: z.uuid(),
        runId: z.uuid(),
        ownerToken: z.string(),
        controllerAndCopybackStopped: z.literal(true),
        stopEvidence: z.string(),
      }),
      curl: z.string(),
    })
    .nullable(),
  maintenanceSql: z.string().nullable(),
});

/**
 * R-UI-4, R-FO-5: what the file-recovery form needs of a file hold (a legacy repair hold or a
 * file-recovery obligation): the source to record (its run and allocation) and the task's status
 * the resolution must send back unchanged. Only in Recovery details (runtime:manage).
 */
export const fileSourceSchema = z.object({
  runId: z.uuid(),
  runStatus: z.enum(["queued", "running", "succeeded", "failed", "cancelled", "timed_out"]),
  runtimeMode: z.enum(["native", "legacy"]),
  leaseId: z.uuid().nullable(),
  providerLeaseId: z.string().nullable(),
  /** The optional "no external actions were performed" confirmation applies (R-UI-4). */
  cancelledNative: z.boolean(),
  sourceIssueStatus: z.enum(["backlog", "todo", "in_progress", "in_review", "blocked", "done", "cancelled"]),
  /** The sandbox was discarded and its files given up (by whom, when, why): nothing is left to recover. */
  givenUp: z.object({ at: z.date(), byType: z.string(), reason: z.string() }).nullable(),
});
export type FileSource = z.infer<typeof fileSourceSchema>;

/**
 * R-PV-1: what the re-verify form needs of an agent-pack verification hold: the held run (its
 * status, to send back), the task's unchanged status, the pack and the reads that ended without an
 * answer, each as its reason in words (never the provider's error text, which may name a host). runtime:manage only.
 */
export const packHoldSchema = z.object({
  runId: z.uuid(),
  runStatus: fileSourceSchema.shape.runStatus,
  sourceIssueStatus: fileSourceSchema.shape.sourceIssueStatus,
  pack: z.object({ runtime: z.string(), version: z.string() }),
  reads: z.array(z.object({ at: z.string(), reason: z.string(), reasonInWords: z.string() })),
});
export type PackHold = z.infer<typeof packHoldSchema>;

export const actionDetailsSchema = z.object({
  actionId: z.uuid(),
  cause: z.string(),
  causeInWords: z.string(),
  status: z.enum(OPEN_RECOVERY_ACTION_STATUSES),
  /** The age is shown from this (relative to now). */
  createdAt: z.date(),
  nextAction: z.string().nullable(),
  runId: z.uuid().nullable(),
  leaseIds: z.array(z.string()),
  phase: z.string().nullable(),
  phaseInWords: z.string().nullable(),
  reason: z.string().nullable(),
  reasonInWords: z.string().nullable(),
  /** An operator's stop attestation is recorded: the reconciler is finishing the copyback. */
  attestedAt: z.date().nullable(),
  /** Only for `runtime:confirm_owner_stop` holders, only for an unattested unverified-owner hold. */
  operator: operatorGuidanceSchema.nullable(),
  /** An export hold's run, lease, allocation, stopped receipt, attempts and retry call. */
  exportHold: exportHoldSchema.nullable(),
  /** A file hold's source, for the file-recovery form; null for other causes or an unknown run. */
  fileSource: fileSourceSchema.nullable(),
  /** R-PV-1: an agent-pack verification hold's run, pack and reads, for the re-verify form; null otherwise. */
  packHold: packHoldSchema.nullable(),
  /**
   * R-RC-3, R-RC-5: the hold's pending "Continue from saved sources" delivery waits: the transient
   * refusal's code, since when it holds and when the reconciler last saw it; null otherwise.
   */
  deferral: z.object({ code: z.string(), since: z.date(), lastSeenAt: z.date() }).nullable(),
  /**
   * R-RW-3: the cloud harness's last refusal on an unattested unverified-owner hold: its fixed code,
   * that code in words and when it was checked; never the harness's or the platform's own text.
   * null when no harness answered (none configured) or once the stop is attested.
   */
  stopProof: z.object({ code: z.string(), codeInWords: z.string(), checkedAt: z.date() }).nullable(),
});
export type ActionDetails = z.infer<typeof actionDetailsSchema>;

export interface DetailsContext {
  /** The console's origin as the caller reached it (for the API call's URL). */
  origin: string | null;
  /** The caller holds runtime:confirm_owner_stop. */
  mayAttest: boolean;
  /** The export holds' details by action id (export-hold.ts loadExportHolds). */
  exportHolds?: ReadonlyMap<string, ExportHold>;
  /** The task's current status and its file holds' source runs (for fileSource). */
  issueStatus?: FileSource["sourceIssueStatus"];
  runs?: ReadonlyMap<string, { status: FileSource["runStatus"]; runtimeMode: FileSource["runtimeMode"] }>;
  /** The holds' reconstruction intents' deferrals by action id (core's reconstructionStates). */
  deferrals?: ReadonlyMap<string, ReconstructionDeferral>;
}

export function actionDetails(row: OpenActionRow, ctx: DetailsContext): ActionDetails {
  const evidence = readOwnerUnverifiedEvidence(row.evidence);
  const status = row.status === "escalated" ? "escalated" : "active";
  const attestedAt = evidence?.attestation ? new Date(evidence.attestation.attestedAt) : null;
  return {
    actionId: row.id,
    cause: row.cause,
    causeInWords: causeInWords(row.cause),
    status,
    createdAt: row.createdAt,
    nextAction: row.nextAction,
    runId: row.runId,
    leaseIds: evidence ? evidence.leaseIds : row.leaseId ? [row.leaseId] : (readLegacyRepairEvidence(row.evidence)?.leaseIds ?? []),
    phase: evidence?.phase ?? null,
    phaseInWords: evidence ? phaseInWords(evidence.phase) : null,
    reason: evidence?.reason ?? null,
    reasonInWords: evidence ? reasonInWords(evidence.reason) : null,
    attestedAt: attestedAt && !Number.isNaN(attestedAt.getTime()) ? attestedAt : null,
    operator: ctx.mayAttest && evidence && !evidence.attestation ? operatorGuidance(row, evidence.runId, evidence, ctx) : null,
    exportHold: ctx.exportHolds?.get(row.id) ?? null,
    fileSource: fileSourceOf(row, ctx),
    packHold: packHoldOf(row, ctx),
    deferral: ctx.deferrals?.get(row.id) ?? null,
    stopProof: stopProofOf(evidence),
  };
}

function stopProofOf(evidence: OwnerUnverifiedEvidence | null): ActionDetails["stopProof"] {
  const check = evidence && !evidence.attestation ? evidence.harnessCheck : undefined;
  const checkedAt = check ? new Date(check.checkedAt) : null;
  if (!check || !checkedAt || Number.isNaN(checkedAt.getTime())) return null;
  return { code: check.code, codeInWords: stopProofInWords(check.code), checkedAt };
}

function packHoldOf(row: OpenActionRow, ctx: DetailsContext): PackHold | null {
  if (row.cause !== PACK_VERIFICATION_UNAVAILABLE_CAUSE || !row.runId || !ctx.issueStatus) return null;
  const run = ctx.runs?.get(row.runId);
  const evidence = readPackVerificationUnavailableEvidence(row.evidence);
  if (!run || !evidence) return null;
  return {
    runId: row.runId,
    runStatus: run.status,
    sourceIssueStatus: ctx.issueStatus,
    pack: { runtime: evidence.pack.runtime, version: evidence.pack.version },
    reads: evidence.reads.map((read) => ({ at: read.at, reason: read.reason, reasonInWords: packReadInWords(read.reason) })),
  };
}

function fileSourceOf(row: OpenActionRow, ctx: DetailsContext): FileSource | null {
  // R-PV-1: the agent-pack verification hold holds no files: it has the re-verify form instead.
  if (!RESOLVABLE_CAUSES.includes(row.cause) || row.cause === PACK_VERIFICATION_UNAVAILABLE_CAUSE || !row.runId || !ctx.issueStatus) return null;
  const run = ctx.runs?.get(row.runId);
  if (!run) return null;
  const recorded =
    readLegacyRepairEvidence(row.evidence) ?? readFileRecoveryEvidence(row.evidence) ?? readExportLimitEvidence(row.evidence) ?? readCopybackFailedEvidence(row.evidence);
  const givenUp = readFilesGivenUp(row.evidence);
  return {
    runId: row.runId,
    runStatus: run.status,
    runtimeMode: run.runtimeMode,
    leaseId: row.leaseId ?? recorded?.leaseId ?? null,
    providerLeaseId: recorded?.providerLeaseId ?? null,
    cancelledNative: run.runtimeMode === "native" && run.status === "cancelled",
    sourceIssueStatus: ctx.issueStatus,
    givenUp: givenUp ? { at: new Date(givenUp.at), byType: givenUp.by.type, reason: givenUp.reason } : null,
  };
}

/**
 * The action's own company, run, token and source issue: exactly what the spec's call and SQL name.
 * A malformed receipt's hold is attested with its fixed reference (attestationTokenOf)
 * and its SQL compares the stored receipt's sha256.
 */
function operatorGuidance(
  row: OpenActionRow,
  runId: string,
  evidence: OwnerUnverifiedEvidence,
  ctx: DetailsContext,
): z.infer<typeof operatorGuidanceSchema> {
  const ownerToken = attestationTokenOf(evidence);
  if (ownerToken === null) return { ownerToken: null, apiCall: null, maintenanceSql: null };
  const target = { companyId: row.companyId, runId, issueId: row.issueId };
  return {
    ownerToken,
    apiCall: attestationCall({ origin: ctx.origin, issueId: row.issueId, actionId: row.id, runId, ownerToken }),
    maintenanceSql: maintenanceSql(evidence.ownerToken === null && evidence.receiptSha256 ? { ...target, receiptSha256: evidence.receiptSha256 } : { ...target, ownerToken }),
  };
}
