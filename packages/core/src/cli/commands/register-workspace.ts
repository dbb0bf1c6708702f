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
}
