// POST /api/runs/:id/stop (R-RC-7): Stop for scripts, the same core service as the task's Stop
// button (board principals with `issues:write`; agents hold no such permission). No body.
//
// Answers:
//   202 { status: "cancelled" | "stop_requested" | "finalizing", runId, requestId, duplicate }
//       cancelled: the run was queued and is cancelled now; stop_requested: the worker executing
//       it stops the agent's process group, pins its sandbox and cancels the run (poll
//       GET /api/runs/:id for `cancelled`); finalizing: the agent already submitted its result,
//       which is still copied back (Stop only ended the agent's process)
//   409 run_not_active   the run already ended; nothing changed
//   404                  no such run, or another company's
import { stopRun } from "@copyback/core/runs";
import { actorOf } from "~/server/routers/activity/actor";
import { restRoute } from "../rest-route";
import { runFromPath } from "../resources";

export const stopRunRoute = restRoute({
  method: "POST",
  path: "/api/runs/:id/stop",
  permission: "issues:write",
  resource: runFromPath,
  handler: async ({ db, principal, companyId, resource }) => {
    const outcome = await stopRun(db, { companyId, runId: resource.id, actor: actorOf(principal) });
    const body = {
      status: outcome.kind,
      runId: outcome.runId,
      requestId: outcome.requestId,
      duplicate: outcome.kind === "cancelled" ? false : outcome.duplicate,
      ...(outcome.kind === "finalizing" ? { resultId: outcome.resultId } : {}),
    };
    return Response.json(body, { status: 202, headers: { "cache-control": "no-store" } });
  },
});
