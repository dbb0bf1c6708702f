// POST /api/runs/:id/finish: an agent submits the result of its own run. Only an agent key of
// the run's own agent may (`agent:finish_run`; board principals never hold it); another agent of
// the same company is refused (403 not_run_agent), one of another company reads not found. The
// result pipeline comes with the native finalization work; until then 501.
import { z } from "zod";
import { DomainError } from "@copyback/core/errors";
import { notImplemented } from "../responses";
import { restRoute } from "../rest-route";
import { runFromPath } from "../resources";

export const finishRunInput = z.strictObject({
  /** Idempotency key of the submission: a repeat finds the first one. */
  dedupeKey: z.string().trim().min(1).max(200),
  /** The agent's result document; its schema is checked by the finalization pipeline. */
  result: z.record(z.string(), z.unknown()),
});

export const finishRunRoute = restRoute({
  method: "POST",
  path: "/api/runs/:id/finish",
  permission: "agent:finish_run",
  resource: runFromPath,
  input: finishRunInput,
  authorizeResource: (principal, run) =>
    principal.kind === "agent" && principal.agentId === run.agentId
      ? null
      : new DomainError("forbidden", "not_run_agent", "Only the run's own agent can finish it."),
  handler: async () => notImplemented("Finishing a run"),
});
