// GET /api/runs/:id: a run's status, runtime mode, phases and timestamps, with its finalization
// coordinator's state when it has one. Controller process identities are not part of it. A queued
// run whose task's workspace is bound to a host without a live, non-draining worker carries
// `waiting` ({ code: "waiting_for_host", hostId, message }, issue 23); a running run whose host has
// no live worker at all carries { code: "host_worker_gone", ... }; null otherwise.
import { readRunHostWait } from "@copyback/core/deployment";
import { notFound } from "@copyback/core/errors";
import { restRoute } from "../rest-route";
import { runFromPath } from "../resources";

export const getRunRoute = restRoute({
  method: "GET",
  path: "/api/runs/:id",
  permission: "runs:read",
  resource: runFromPath,
  handler: async ({ db, companyId, resource }) => {
    const run = await db.heartbeatRun.findFirst({
      where: { id: resource.id, companyId },
      select: {
        id: true,
        companyId: true,
        agentId: true,
        nativeIssueId: true,
        runtimeMode: true,
        status: true,
        nativePhase: true,
        resultJson: true,
        predecessorRunId: true,
        wakeReason: true,
        errorCode: true,
        errorMessage: true,
        startedAt: true,
        finishedAt: true,
        createdAt: true,
        updatedAt: true,
        finalization: {
          select: { id: true, phase: true, attempt: true, resultId: true, failureCode: true, nextAttemptAt: true, committedAt: true, updatedAt: true },
        },
      },
    });
    if (!run) throw notFound("The run");
    const { nativeIssueId, ...rest } = run;
    const waiting = run.status === "queued" || run.status === "running" ? await readRunHostWait(db, run.id) : null;
    return { run: { ...rest, issueId: nativeIssueId, waiting } };
  },
});
