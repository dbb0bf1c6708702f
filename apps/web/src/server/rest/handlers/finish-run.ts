// POST /api/runs/:id/finish: an agent submits the result of its own run (its "finish" tool
// call). Only an agent key of the run's own agent may (`agent:finish_run`; board principals never
// hold it); another agent of the same company is refused (403 not_run_agent), one of another
// company reads not found.
//
// Answers:
//   200 { status: "accepted", resultId, duplicate }  published as accepted (R-ORP-2: in the same
//       transaction that locks and updates the run); a repeat with the same dedupeKey and
//       document finds the first submission (duplicate: true)
//   422 { status: "rejected", code, resultId, ... }  the document was stored, as rejected
//   400 invalid_request                              not a submission at all: nothing stored
//   403/404/409                                      publishRunResult's DomainErrors, through the
//       one mapping (run_not_accepting_results, result_already_accepted, ...)
import { z } from "zod";
import { DomainError } from "@copyback/core/errors";
import { publishRunResult } from "@copyback/core/runs";
import { restRoute } from "../rest-route";
import { runFromPath } from "../resources";

export const finishRunInput = z.strictObject({
  /** Idempotency key of the submission: a repeat finds the first one. */
  dedupeKey: z.string().trim().min(1).max(200),
  /** The agent's result document (copyback.run-result.v1); publishRunResult validates it. */
  result: z.record(z.string(), z.unknown()),
});

export const finishRunRoute = restRoute({
  method: "POST",
  path: "/api/runs/:id/finish",
  permission: "agent:finish_run",
  resource: runFromPath,
  input: finishRunInput,
  // 422 here means "your document was stored and rejected"; a body that is no submission at all
  // must read differently, so it is a 400.
  invalidBodyStatus: 400,
  authorizeResource: (principal, run) => {
    if (principal.kind !== "agent" || principal.agentId !== run.agentId) return new DomainError("forbidden", "not_run_agent", "Only the run's own agent can finish it.");
    // A run-scoped key finishes its own run only, not another run of the same agent.
    if (principal.runId !== undefined && principal.runId !== run.id) return new DomainError("forbidden", "not_run_key", "This key belongs to another run of the agent.");
    return null;
  },
  handler: async ({ db, principal, resource, input }) => {
    // authorizeResource admitted only the run's own agent.
    const agentId = principal.kind === "agent" ? principal.agentId : resource.agentId;
    const outcome = await publishRunResult(db, {
      runId: resource.id,
      agentId,
      dedupeKey: input.dedupeKey,
      document: input.result,
      source: "finish_api",
    });
    if (outcome.kind === "accepted") {
      return { status: "accepted", resultId: outcome.resultId, duplicate: outcome.duplicate };
    }
    return Response.json(
      { status: "rejected", code: outcome.code, message: outcome.message, resultId: outcome.resultId, duplicate: outcome.duplicate },
      { status: 422, headers: { "cache-control": "no-store" } },
    );
  },
});
