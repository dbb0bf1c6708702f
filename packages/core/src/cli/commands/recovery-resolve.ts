// `copyback recovery resolve --action ID --source-status STATUS --run ID --lease ID --run-status
// STATUS --stop-evidence TEXT --recovered-files TEXT [--outcome restored|false_positive|cancelled|reverify]
// [--no-external-actions] [--note TEXT]`: records a file hold's repair (R-RR-5, R-FO-5) through
// THE service behind the REST route and the tRPC mutation, resolveRecoveryAction; every rule is
// decided there, never here.
//
// Who may run it: like `recovery attest`, whoever reaches the instance's database already controls
// the instance (a board operator and more); resolutions are recorded with the system actor. The
// request is checked by the same schema as the REST body before the database is opened, so
// malformed input writes nothing.
import { notFound } from "../../errors";
import { resolveRecoveryAction, resolveRecoveryActionBody } from "../../recovery/operator/resolve-recovery-action";
import { SYSTEM_ACTOR } from "../../records/record-activity";
import { withCliDatabase } from "../database";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import type { CommandContext, CommandResult } from "../io";
import { DEFAULT_RESOLVE_OUTCOME, RESOLVE_FLAG_OF } from "../recovery/resolve-help";

export interface ResolveOptions {
  action: string;
  outcome?: string;
  sourceStatus: string;
  run: string;
  lease?: string;
  runStatus: string;
  noExternalActions?: boolean;
  stopEvidence?: string;
  recoveredFiles?: string;
  note?: string;
}

export async function recoveryResolve(ctx: CommandContext, opts: ResolveOptions): Promise<CommandResult> {
  const evidence =
    opts.stopEvidence === undefined && opts.recoveredFiles === undefined ? undefined : { stopEvidence: opts.stopEvidence ?? "", recoveredFiles: opts.recoveredFiles ?? "" };
  const parsed = resolveRecoveryActionBody.safeParse({
    actionId: opts.action,
    outcome: opts.outcome ?? DEFAULT_RESOLVE_OUTCOME,
    sourceIssueStatus: opts.sourceStatus,
    executionReconciliation: { runId: opts.run, leaseId: opts.lease ?? null, runStatus: opts.runStatus, noExternalActionsPerformed: opts.noExternalActions === true },
    ...(evidence ? { workspaceRepairEvidence: evidence } : {}),
    ...(opts.note === undefined ? {} : { note: opts.note }),
  });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ flag: RESOLVE_FLAG_OF[String(issue.path[0])] ?? issue.path.join("."), message: issue.message }));
    throw new CliError(EXIT.usage, "invalid_request", `invalid resolution, nothing written: ${issues.map((i) => `${i.flag}: ${i.message}`).join("; ")}`, { issues });
  }
  const body = parsed.data;
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const action = await prisma.issueRecoveryAction.findUnique({ where: { id: body.actionId }, select: { companyId: true, issueId: true } });
    if (!action) throw notFound(`The recovery action ${body.actionId}`);
    const result = await resolveRecoveryAction(prisma, { ...body, ...action, actor: SYSTEM_ACTOR });
    const json = { database: source, ...result, companyId: action.companyId, issueId: action.issueId, actor: SYSTEM_ACTOR };
    const text =
      result.status === "resolved" && result.outcome === "reverify"
        ? [
            `resolved: action ${result.actionId} (reverify), run ${result.runId}.`,
            "The held run goes back to the claim with a fresh agent-pack read budget; it verifies its pack again before its first turn (R-PV-1). The task, its owner and status are unchanged.",
          ]
        : result.status === "resolved"
        ? [
            `resolved: action ${result.actionId} (${result.outcome}), run ${result.runId}, leases ${result.leaseIds.join(", ") || "none"}.`,
            "The task, its owner and status, the run and the retained allocation are unchanged; nothing was queued. Remove the allocation in the provider's console once its files are no longer needed.",
          ]
        : [`already resolved: action ${result.actionId} (${result.outcome}): nothing written.`];
    return { exitCode: EXIT.ok, json, text };
  });
}
