// `copyback agent set-environment --agent ID --environment ID`: the environment an agent's runs
// are dispatched in, through the same service as the console's chooser
// (environments/set-agent-environment.ts): both must exist and belong to one company, an archived
// agent is refused, a refusal or a repeat writes nothing, and a change commits with its activity
// row (`agent.environment_changed`, system actor). Runs dispatched from then on use it; a run that
// already holds a sandbox keeps it.
import { setAgentEnvironment } from "../../environments/set-agent-environment";
import { SYSTEM_ACTOR } from "../../records/record-activity";
import { withCliDatabase } from "../database";
import { EXIT } from "../exit-codes";
import type { CommandContext, CommandResult } from "../io";

export async function agentSetEnvironment(ctx: CommandContext, opts: { agent: string; environment: string }): Promise<CommandResult> {
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const result = await setAgentEnvironment(prisma, { agentId: opts.agent, environmentId: opts.environment, companyId: null, actor: SYSTEM_ACTOR });
    const { agent, environment } = result;
    const json = { database: source, ...result };
    const where = `${environment.name} (${environment.provider}, ${environment.id})`;
    const text = result.changed
      ? [`agent ${agent.name} (${agent.id}) now runs in ${where}: runs dispatched from now on use it (a run already holding a sandbox keeps it)`]
      : [`agent ${agent.name} (${agent.id}) already runs in ${where}: nothing changed`];
    return { exitCode: EXIT.ok, json, text };
  });
}
