// `copyback workspace move --workspace ID --to-host HOST --reason TEXT` (issue 23): re-binds an
// execution workspace to another host after the operator moved its directory there. The refusals
// (a running run, an unsettled finalization, a lease not destroyed, an open recovery action) and
// the audit row are core's (workspace/move-workspace-host.ts); a refusal changes nothing.
import { z } from "zod";
import { SYSTEM_ACTOR } from "../../records/record-activity";
import { moveWorkspaceHost } from "../../workspace/move-workspace-host";
import { withCliDatabase } from "../database";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import type { CommandContext, CommandResult } from "../io";

const options = z.object({
  workspace: z.uuid("--workspace: an execution workspace id"),
  toHost: z.string({ error: "--to-host: the host id the workspace moves to" }),
  reason: z.string({ error: "--reason: say why the workspace moves" }),
});

export async function workspaceMove(ctx: CommandContext, opts: { workspace?: string; toHost?: string; reason?: string }): Promise<CommandResult> {
  const parsed = options.safeParse(opts);
  if (!parsed.success) {
    throw new CliError(EXIT.usage, "invalid_request", `invalid move, nothing changed: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  }
  const input = parsed.data;
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const result = await moveWorkspaceHost(prisma, { workspaceId: input.workspace, toHostId: input.toHost, reason: input.reason, actor: SYSTEM_ACTOR });
    return {
      exitCode: EXIT.ok,
      json: { database: source, ...result },
      text: [`workspace ${result.workspaceId} moved from host ${result.fromHostId ?? "(unbound)"} to host ${result.toHostId}`],
    };
  });
}
