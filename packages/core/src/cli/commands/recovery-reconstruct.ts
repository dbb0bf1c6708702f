// `copyback recovery reconstruct --issue ID --action ID --run ID --lease ID --description TEXT
//  --status-version N [--attachment ID ...] [--outcome OUTCOME=ACTION ...] [--request-id ID]`:
// "Continue from saved sources" (R-RC-2) through THE service behind the REST route and the tRPC
// mutation, reconstructWorkspace; admission (R-RC-1..R-RC-6) is decided there, never here.
//
// Like `recovery retry-export`, the CLI has no sign-in: whoever can reach the instance's database
// and its instance root already controls the instance, so the decision is recorded with the
// system actor. The attachments' bytes are hashed in this instance's attachment store (`--home`).
// The request is checked by the same schema as the REST body before the database is opened, so
// malformed input writes nothing. Without --request-id a fresh one is used: a repeat for the same
// action still adopts the first intent (R-RC-3).
import { randomUUID } from "node:crypto";
import { notFound } from "../../errors";
import { reconstructWorkspace } from "../../recovery/operator/reconstruct-workspace";
import { reconstructWorkspaceBody } from "../../recovery/reconstruction/contract";
import { SYSTEM_ACTOR } from "../../records/record-activity";
import { withCliDatabase } from "../database";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import type { CommandContext, CommandResult } from "../io";

export interface ReconstructOptions {
  issue: string;
  action: string;
  run: string;
  lease: string;
  description: string;
  statusVersion: number;
  attachment: string[];
  /** `performed=...`, `not_performed=...` or `unknown=...`: the outcome, then the action in words. */
  outcome: string[];
  requestId?: string;
}

const FLAG_OF: Record<string, string> = {
  actionId: "--action",
  sourceRunId: "--run",
  leaseId: "--lease",
  attachmentIds: "--attachment",
  description: "--description",
  externalActionOutcomes: "--outcome",
  sourceStatusVersion: "--status-version",
  requestId: "--request-id",
};

/** `not_performed=opened a pull request` -> { outcome, action }; anything else is left for the schema to refuse. */
function parseOutcome(text: string): { action: string; outcome: string } {
  const at = text.indexOf("=");
  return at < 0 ? { action: text, outcome: "" } : { outcome: text.slice(0, at).trim(), action: text.slice(at + 1) };
}

export async function recoveryReconstruct(ctx: CommandContext, opts: ReconstructOptions): Promise<CommandResult> {
  const parsed = reconstructWorkspaceBody.safeParse({
    actionId: opts.action,
    sourceRunId: opts.run,
    leaseId: opts.lease,
    attachmentIds: opts.attachment,
    description: opts.description,
    externalActionOutcomes: opts.outcome.map(parseOutcome),
    sourceStatusVersion: opts.statusVersion,
    requestId: opts.requestId ?? randomUUID(),
  });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ flag: FLAG_OF[String(issue.path[0])] ?? issue.path.join("."), message: issue.message }));
    throw new CliError(EXIT.usage, "invalid_request", `invalid reconstruction, nothing written: ${issues.map((i) => `${i.flag}: ${i.message}`).join("; ")}`, { issues });
  }
  const body = parsed.data;
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    // The service scopes by company and task; the task must be the one the action belongs to.
    const action = await prisma.issueRecoveryAction.findUnique({ where: { id: body.actionId }, select: { companyId: true, issueId: true } });
    if (!action || action.issueId !== opts.issue) throw notFound(`The recovery action ${body.actionId} of task ${opts.issue}`);
    const outcome = await reconstructWorkspace({ db: prisma, instanceRoot: ctx.home }, { ...body, companyId: action.companyId, issueId: action.issueId, actor: SYSTEM_ACTOR });
    const { intent } = outcome;
    const json = { database: source, ...outcome, companyId: action.companyId, issueId: action.issueId, actor: SYSTEM_ACTOR };
    const text =
      outcome.kind === "recorded"
        ? [
            `recorded: reconstruction ${intent.id} for action ${intent.actionId} (run ${intent.sourceRunId}, destroyed lease ${intent.leaseId}), ${intent.attachmentHashes.length} attachment(s) hashed.`,
            "The worker's reconciler delivers it as a fresh run of the task's agent; nothing of the old run is replayed.",
          ]
        : [
            `already recorded: reconstruction ${intent.id} (${intent.status}) for action ${intent.actionId}: nothing written.`,
            // R-RC-3: why its delivery waits, when the reconciler recorded a transient refusal.
            ...(intent.deferral ? [`  waiting  ${intent.deferral.code} since ${intent.deferral.since} (last seen ${intent.deferral.lastSeenAt}): ${intent.deferral.message}`] : []),
          ];
    return { exitCode: EXIT.ok, json, text };
  });
}
