// The `agent` commands: the agents of the instance database and the environment each runs in.
// Loaded on use, like the environment commands.
import type { Command } from "commander";
import { uuid } from "../arguments";
import type { Runner } from "../runner";

export function registerAgentCommands(program: Command, run: Runner): void {
  const agent = program.command("agent").description("the agents of the instance database: list them with their environment, point one at an environment");
  agent
    .command("list")
    .description("every agent with its id, company, name and environment")
    .option("--company <ref>", "only this company's: its id, issue prefix or name")
    .action(run("agent list", async (ctx, opts: { company?: string }) => (await import("./agent-list")).agentList(ctx, opts)));
  agent
    .command("set-environment")
    .description(
      "point an agent at an environment of its company (copyback environment list); runs dispatched from now on use it; recorded in the activity log, a refusal or a repeat writes nothing",
    )
    .requiredOption("--agent <id>", "the agent (copyback agent list)", uuid)
    .requiredOption("--environment <id>", "the environment (copyback environment list)", uuid)
    .action(
      run("agent set-environment", async (ctx, opts: { agent: string; environment: string }) =>
        (await import("./agent-set-environment")).agentSetEnvironment(ctx, opts),
      ),
    );
}
