// The `workspace` commands: what the committed runs wrote into a host workspace. Loaded on use,
// like the recovery commands.
import type { Command } from "commander";
import { positiveInt } from "../arguments";
import type { Runner } from "../runner";

export function registerWorkspaceCommands(program: Command, run: Runner): void {
  const workspace = program.command("workspace").description("host workspaces: what the committed runs wrote there");
  workspace
    .command("history")
    .argument("<path>", "a file or directory inside a host workspace (absolute, or relative to here)")
    .description("which committed runs last wrote or deleted PATH, and when, newest first")
    .option("--limit <n>", "at most this many (default 20)", positiveInt)
    .action(
      run("workspace history", async (ctx, target: string, opts: { limit?: number }) => {
        const { workspaceHistory, DEFAULT_HISTORY_LIMIT } = await import("./workspace-history");
        return workspaceHistory(ctx, { path: target, limit: opts.limit ?? DEFAULT_HISTORY_LIMIT });
      }),
    );
  // Issue 23: the explicit, audited move of a workspace to another host.
  workspace
    .command("move")
    .description("bind a host workspace to another host (after its directory was moved there); refused while anything of it runs, settles, is retained or held")
    .option("--workspace <id>", "the execution workspace id")
    .option("--to-host <hostId>", "the host id it moves to (see copyback doctor on that host)")
    .option("--reason <text>", "why it moves (recorded in the activity log)")
    .action(
      run("workspace move", async (ctx, opts: { workspace?: string; toHost?: string; reason?: string }) => {
        const { workspaceMove } = await import("./workspace-move");
        return workspaceMove(ctx, opts);
      }),
    );
}
