// GET /api/issues/:id/recovery-actions (R-RR-4): every recovery action of the task, open ones
// first, each with its exact run and lease ids (`leaseId` and `leaseIds`: every lease it names), so that an older repair hold is listed beside any
// newer incident and never hidden by it. The recorded controller's identity (host, pid) is shown
// only to `runtime:manage` holders and the owner token only to `runtime:confirm_owner_stop`
// holders, as in the task's Recovery details (R-UI-1).
import { authorize, type Principal } from "@copyback/core/auth";
import { isOpenRecoveryActionStatus } from "@copyback/core/records";
import { recoveryActionSelect } from "@copyback/core/recovery";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

function redactEvidence(evidence: unknown, can: { manage: boolean; confirm: boolean }): unknown {
  if (typeof evidence !== "object" || evidence === null || Array.isArray(evidence)) return evidence;
  const copy: Record<string, unknown> = { ...(evidence as Record<string, unknown>) };
  if (!can.manage && "owner" in copy) copy.owner = "redacted";
  if (!can.confirm && "ownerToken" in copy) copy.ownerToken = "redacted";
  const attestation = copy.attestation;
  if (typeof attestation === "object" && attestation !== null) {
    const a: Record<string, unknown> = { ...(attestation as Record<string, unknown>) };
    if (!can.manage && "owner" in a) a.owner = "redacted";
    if (!can.confirm && "ownerToken" in a) a.ownerToken = "redacted";
    copy.attestation = a;
  }
  return copy;
}

/** R-RR-4: every lease the action names (its lease column, then its evidence's leaseIds), each once. */
export function leaseIdsOf(action: { leaseId: string | null; evidence: unknown }): string[] {
  const ids = action.leaseId ? [action.leaseId] : [];
  const evidence = action.evidence;
  const listed = typeof evidence === "object" && evidence !== null && !Array.isArray(evidence) ? (evidence as Record<string, unknown>).leaseIds : undefined;
  if (Array.isArray(listed)) for (const id of listed) if (typeof id === "string" && !ids.includes(id)) ids.push(id);
  return ids;
}

function permissionsOf(principal: Principal, companyId: string) {
  return {
    manage: authorize(principal, "runtime:manage", companyId).kind === "allow",
    confirm: authorize(principal, "runtime:confirm_owner_stop", companyId).kind === "allow",
  };
}

export const listRecoveryActionsRoute = restRoute({
  method: "GET",
  path: "/api/issues/:id/recovery-actions",
  permission: "issues:read",
  resource: issueFromPath,
  handler: async ({ db, companyId, resource, principal }) => {
    const actions = await db.issueRecoveryAction.findMany({
      where: { companyId, issueId: resource.id },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: 500,
      select: recoveryActionSelect,
    });
    const can = permissionsOf(principal, companyId);
    const withOpen = actions.map((action) => ({ ...action, leaseIds: leaseIdsOf(action), evidence: redactEvidence(action.evidence, can), open: isOpenRecoveryActionStatus(action.status) }));
    // Stable partition: open actions first, each group newest first.
    withOpen.sort((a, b) => Number(b.open) - Number(a.open));
    return { issueId: resource.id, actions: withOpen };
  },
});
