// `copyback recovery attest --action ID --run ID --token TOKEN --controller-and-copyback-stopped
// --evidence TEXT`: the operator's stop attestation (R-ATT-1) through THE service behind the REST
// route and the tRPC mutation, attestOwnerStop; admission (R-ATT-3) is decided there, never here.
//
// Who may run it (R-ATT-2): the CLI has no sign-in. Whoever can reach the instance's database
// (DATABASE_URL, or the embedded cluster's owner-only password file) already controls the
// instance: the CLI is for instance operators, the spec's "instance administrator", and records
// its attestations with the system actor. The request is checked by the same schema as the REST
// body before the database is opened, so malformed input writes nothing.
import { notFound } from "../../errors";
import { SYSTEM_ACTOR } from "../../records/record-activity";
import { attestOwnerStop, attestOwnerStopBody } from "../../recovery/operator/attest-owner-stop";
import { withCliDatabase } from "../database";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import type { CommandContext, CommandResult } from "../io";

export interface AttestOptions {
  action: string;
  run: string;
  token: string;
  evidence: string;
  /** commander's required flag; anything but true is not an attestation. */
  controllerAndCopybackStopped: boolean;
}

/** The body's fields, named as the operator typed them. */
const FLAG_OF: Record<string, string> = {
  actionId: "--action",
  runId: "--run",
  ownerToken: "--token",
  stopEvidence: "--evidence",
  controllerAndCopybackStopped: "--controller-and-copyback-stopped",
};

export async function recoveryAttest(
  ctx: CommandContext,
  opts: AttestOptions,
): Promise<CommandResult> {
  const parsed = attestOwnerStopBody.safeParse({
    actionId: opts.action,
    runId: opts.run,
    ownerToken: opts.token,
    controllerAndCopybackStopped: opts.controllerAndCopybackStopped,
    stopEvidence: opts.evidence,
  });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      flag: FLAG_OF[String(issue.path[0])] ?? issue.path.join("."),
      message: issue.message,
    }));
    throw new CliError(
      EXIT.usage,
      "invalid_request",
      `invalid attestation, nothing written: ${issues.map((i) => `${i.flag}: ${i.message}`).join("; ")}`,
      { issues },
    );
  }
  const body = parsed.data;
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    // The service scopes by company and issue; the operator names only the action.
    const action = await prisma.issueRecoveryAction.findUnique({
      where: { id: body.actionId },
      select: { companyId: true, issueId: true },
    });
    if (!action) throw notFound(`The recovery action ${body.actionId}`);
    const result = await attestOwnerStop(prisma, { ...body, ...action, actor: SYSTEM_ACTOR });
    const json = {
      database: source,
      ...result,
      companyId: action.companyId,
      issueId: action.issueId,
      actor: SYSTEM_ACTOR,
    };
    const text =
      result.status === "attested"
        ? [
            `attested: action ${result.actionId}, run ${result.runId}: the owner receipt is released and your evidence recorded.`,
            "The reconciler finishes the copyback of the saved result; the action resolves once it commits (copyback recovery show " +
              `${result.actionId}).`,
          ]
        : [`already attested: action ${result.actionId}, run ${result.runId}: nothing written.`];
    return { exitCode: EXIT.ok, json, text };
  });
}
