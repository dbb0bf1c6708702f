// Publishing a run's result (the finish API or the process adapter's result file): validated,
// stored immutably and idempotently in native_run_results, and — when valid — published as
// accepted in the same transaction that locks and updates the heartbeat row (R-ORP-2), so that
// orphan recovery's conditional write on the heartbeat's xmin sees the acceptance or loses.
import { Prisma, withTransaction, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { conflict, DomainError, invalid, notFound } from "../errors";
import { advanceFinalization } from "../records/coordinator";
import { canonicalJson, validateRunResult, type ResultValidation } from "../records/result-document";
import { mergedJsonObject } from "../records/run-json";
import { recordRunEvent } from "../records/run-log";

export type ResultSource = "finish_api" | "result_file";

export interface PublishRunResultInput {
  runId: string;
  /** The submitting agent (from its API key, or the run's agent for the result file). */
  agentId: string;
  /** Caller idempotency key: the same key and document return the stored row. */
  dedupeKey: string;
  /** Parsed JSON as submitted. */
  document: unknown;
  source: ResultSource;
}

export type PublishOutcome =
  | { kind: "accepted"; resultId: string; duplicate: boolean }
  | { kind: "rejected"; resultId: string; code: string; message: string; duplicate: boolean };

const MAX_DEDUPE_KEY_LENGTH = 200;

interface LockedRun {
  id: string;
  company_id: string;
  agent_id: string;
  native_issue_id: string;
  status: string;
  runtime_mode: string;
}

export async function publishRunResult(db: PrismaClient, input: PublishRunResultInput): Promise<PublishOutcome> {
  if (
    typeof input.dedupeKey !== "string" ||
    input.dedupeKey.length === 0 ||
    input.dedupeKey.length > MAX_DEDUPE_KEY_LENGTH
  ) {
    throw invalid("dedupe_key_invalid", `The dedupe key must be 1 to ${MAX_DEDUPE_KEY_LENGTH} characters.`);
  }
  const verdict = validateOrRefuse(input.document);

  return withTransaction(db, async (tx) => {
    // R-ORP-2: the heartbeat row is locked first and updated below in this same transaction.
    const [run] = await tx.$queryRaw<LockedRun[]>`
      SELECT id, company_id, agent_id, native_issue_id, status::text AS status, runtime_mode::text AS runtime_mode
      FROM heartbeat_runs WHERE id = ${input.runId}::uuid FOR UPDATE`;
    if (!run) throw notFound("Run");
    if (run.agent_id !== input.agentId) {
      throw new DomainError("forbidden", "not_run_agent", "Only the run's own agent may submit its result.");
    }

    // Idempotency comes before the status check: a repeated finish after the run moved on still
    // gets the answer it got the first time.
    const previous = await tx.nativeRunResult.findUnique({
      where: { runId_dedupeKey: { runId: run.id, dedupeKey: input.dedupeKey } },
    });
    if (previous) return replay(previous, verdict.sha256);

    if (run.status !== "running" || run.runtime_mode !== "native") {
      throw conflict("run_not_accepting_results", `The run is ${run.status} and accepts no result.`, {
        status: run.status,
      });
    }

    const base = {
      companyId: run.company_id,
      runId: run.id,
      issueId: run.native_issue_id,
      agentId: run.agent_id,
      canonicalSha256: verdict.sha256,
      dedupeKey: input.dedupeKey,
    };

    if (verdict.kind === "invalid") {
      // A rejected result is kept (with its code) for the record; it blocks nothing.
      const row = await tx.nativeRunResult.create({
        data: {
          ...base,
          schemaStatus: "rejected",
          rejectionCode: verdict.code,
          payload: storedRejectedPayload(verdict),
        },
      });
      await recordRunEvent(tx, {
        companyId: run.company_id,
        runId: run.id,
        level: "warn",
        code: "result.rejected",
        message: verdict.message.slice(0, 2_000),
        payload: { resultId: row.id, rejectionCode: verdict.code, source: input.source },
      });
      return { kind: "rejected", resultId: row.id, code: verdict.code, message: verdict.message, duplicate: false };
    }

    const accepted = await tx.nativeRunResult.findFirst({
      where: { runId: run.id, schemaStatus: "accepted" },
      select: { id: true },
    });
    if (accepted) {
      throw conflict("result_already_accepted", "This run already has an accepted result.", {
        resultId: accepted.id,
      });
    }
    const row = await tx.nativeRunResult.create({
      data: { ...base, schemaStatus: "accepted", payload: verdict.document },
    });
    await acceptOnHeartbeat(tx, run.id, row.id, verdict.document.outcome);
    await recordRunEvent(tx, {
      companyId: run.company_id,
      runId: run.id,
      level: "info",
      code: "result.accepted",
      message: `Result accepted (${verdict.document.outcome}).`,
      payload: { resultId: row.id, outcome: verdict.document.outcome, source: input.source },
    });
    return { kind: "accepted", resultId: row.id, duplicate: false };
  });
}

/** Canonicalizes and validates outside the transaction; a value with no JSON form changes nothing. */
function validateOrRefuse(document: unknown): ResultValidation {
  try {
    canonicalJson(document);
  } catch {
    throw invalid("result_not_json", "The result document is not a JSON value.");
  }
  return validateRunResult(document);
}

function replay(
  previous: { id: string; canonicalSha256: string; schemaStatus: string; rejectionCode: string | null },
  sha256: string,
): PublishOutcome {
  if (previous.canonicalSha256 !== sha256) {
    throw conflict(
      "result_dedupe_key_reused",
      "This dedupe key was already used for a different result document.",
      { resultId: previous.id },
    );
  }
  if (previous.schemaStatus === "accepted") return { kind: "accepted", resultId: previous.id, duplicate: true };
  const code = previous.rejectionCode ?? "result_schema_invalid";
  return { kind: "rejected", resultId: previous.id, code, message: "The result document was rejected.", duplicate: true };
}

/** Oversized documents are not stored whole (their hash identifies them); others are kept as sent. */
function storedRejectedPayload(
  verdict: Extract<ResultValidation, { kind: "invalid" }>,
): Prisma.InputJsonValue | typeof Prisma.JsonNull {
  if (verdict.code === "result_too_large") {
    return { omitted: true, canonicalBytes: Buffer.byteLength(verdict.canonical, "utf8") };
  }
  const parsed: unknown = JSON.parse(verdict.canonical);
  return parsed === null ? Prisma.JsonNull : (parsed as Prisma.InputJsonValue);
}

/** R-ORP-2: the acceptance writes the heartbeat (its xmin changes in this commit) and the coordinator. */
async function acceptOnHeartbeat(tx: TransactionClient, runId: string, resultId: string, outcome: string) {
  const advanced = await advanceFinalization(tx, {
    runId,
    from: ["observed"],
    to: "result_accepted",
    patch: { resultId },
  });
  if (!advanced) {
    throw conflict("run_not_accepting_results", "The run's finalization is not waiting for a result.");
  }
  await tx.$executeRaw`
    UPDATE heartbeat_runs
    SET result_json = ${mergedJsonObject("result_json", Prisma.sql`jsonb_build_object('resultId', ${resultId}::text, 'outcome', ${outcome}::text)`)},
        updated_at = now()
    WHERE id = ${runId}::uuid`;
}
