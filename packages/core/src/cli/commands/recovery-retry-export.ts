// `copyback recovery retry-export --issue ID --action ID --run ID --note TEXT`: the export-only
// retry (R-EX-2) through THE service behind the REST route and the tRPC mutation,
// retryWorkspaceExport; admission (R-EX-3) is decided there, never here.
//
// Like `recovery attest`, the CLI has no sign-in: whoever can reach the instance's database and
// its instance root already controls the instance, so the retry is recorded with the system
// actor. The sandbox is reached through this instance's built-in providers (the `local`
// sandboxes under the instance root, `--home`); the re-admitted run is committed by the worker's
// reconciler. The request is checked by the same schema as the REST body before the database is
// opened, so malformed input writes nothing.
import { resolveHostId } from "../../deployment/host-id";
import { notFound } from "../../errors";
import { createDefaultRegistry } from "../../providers/default-registry";
import { retryWorkspaceExport, retryWorkspaceExportBody } from "../../recovery/operator/retry-workspace-export";
import { SYSTEM_ACTOR } from "../../records/record-activity";
import { withCliDatabase } from "../database";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import type { CommandContext, CommandResult } from "../io";

export interface RetryExportOptions {
  issue: string;
  action: string;
  run: string;
  note: string;
}

const FLAG_OF: Record<string, string> = { actionId: "--action", runId: "--run", repairNote: "--note" };

export async function recoveryRetryExport(ctx: CommandContext, opts: RetryExportOptions): Promise<CommandResult> {
  const parsed = retryWorkspaceExportBody.safeParse({ actionId: opts.action, runId: opts.run, repairNote: opts.note });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ flag: FLAG_OF[String(issue.path[0])] ?? issue.path.join("."), message: issue.message }));
    throw new CliError(EXIT.usage, "invalid_request", `invalid export-only retry, nothing written: ${issues.map((i) => `${i.flag}: ${i.message}`).join("; ")}`, { issues });
  }
  const body = parsed.data;
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    // The service scopes by company and task; the task must be the one the action belongs to.
    const action = await prisma.issueRecoveryAction.findUnique({ where: { id: body.actionId }, select: { companyId: true, issueId: true } });
    if (!action || action.issueId !== opts.issue) throw notFound(`The recovery action ${body.actionId} of task ${opts.issue}`);
    const registry = createDefaultRegistry({ instanceRoot: ctx.home });
    // Issue 23: this instance root's host; another host's sandbox or workspace is refused, nothing written.
    const { hostId } = await resolveHostId({ instanceRoot: ctx.home, ...(ctx.env.hostId !== undefined ? { configured: ctx.env.hostId } : {}) });
    const result = await retryWorkspaceExport({ db: prisma, registry, hostId }, { ...body, companyId: action.companyId, issueId: action.issueId, actor: SYSTEM_ACTOR });
    const { finalization: _finalization, ...answer } = result;
    const json = { database: source, ...answer, companyId: action.companyId, issueId: action.issueId, actor: SYSTEM_ACTOR };
    const text =
      result.status === "readmitted"
        ? [
            `re-admitted: action ${result.actionId}, run ${result.runId}: lease ${result.leaseId} was resumed and verified (workspace identity, and the sentinel of an ephemeral sandbox); your repair note is recorded.`,
            `The reconciler copies the saved result of the same run; no agent turn is started. The action resolves once it commits (copyback recovery show ${result.actionId}).`,
          ]
        : [`already requested: action ${result.actionId}, run ${result.runId} (${result.retryState}): nothing written.`];
    return { exitCode: EXIT.ok, json, text };
  });
}
