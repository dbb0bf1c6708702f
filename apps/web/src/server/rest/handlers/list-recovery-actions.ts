// GET /api/issues/:id/recovery-actions (R-RR-4): every recovery action of the task, open ones
// first, each with its exact run and lease ids, so that an older repair hold is listed beside any
// newer incident and never hidden by it.
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

const OPEN = new Set(["active", "escalated"]);

export const listRecoveryActionsRoute = restRoute({
  method: "GET",
  path: "/api/issues/:id/recovery-actions",
  permission: "issues:read",
  resource: issueFromPath,
  handler: async ({ db, companyId, resource }) => {
    const actions = await db.issueRecoveryAction.findMany({
      where: { companyId, issueId: resource.id },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: 500,
      select: {
        id: true,
        issueId: true,
        runId: true,
        leaseId: true,
        cause: true,
        fingerprint: true,
        ownerType: true,
        status: true,
        evidence: true,
        nextAction: true,
        attemptCount: true,
        maxAttempts: true,
        outcome: true,
        resolvedAt: true,
        resolvedByType: true,
        resolutionNote: true,
        createdAt: true,
        updatedAt: true,
      },
    });
    const withOpen = actions.map((action) => ({ ...action, open: OPEN.has(action.status) }));
    // Stable partition: open actions first, each group newest first.
    withOpen.sort((a, b) => Number(b.open) - Number(a.open));
    return { issueId: resource.id, actions: withOpen };
  },
});
