// The `sandboxes` commands: retained sandbox allocations, for instance operators. Loaded on use,
// like the recovery commands.
import type { Command } from "commander";
import { collect, positiveInt, uuid } from "../arguments";
import type { Runner } from "../runner";

export function registerSandboxCommands(program: Command, run: Runner): void {
  const sandboxes = program.command("sandboxes").description("retained sandbox allocations, for instance operators");
  sandboxes
    .command("list")
    .description("every retained allocation: why, its run and task, provider, plugin, allocation id, age and size")
    .option("--company <id>", "only this company's", uuid)
    .option("--limit <n>", "at most this many, oldest first (default 200)", positiveInt)
    .action(
      run("sandboxes list", async (ctx, opts: { company?: string; limit?: number }) => {
        const { sandboxesList, DEFAULT_SANDBOX_LIMIT } = await import("./sandboxes-list");
        return sandboxesList(ctx, { limit: opts.limit ?? DEFAULT_SANDBOX_LIMIT, ...(opts.company === undefined ? {} : { companyId: opts.company }) });
      }),
    );
  sandboxes
    .command("discard")
    .description(
      "destroy one retained sandbox through its pinned plugin: name its allocation id and acknowledge every open recovery action that still needs its files; records a confirmed destruction receipt. Recorded as the system actor",
    )
    .requiredOption("--lease <id>", "the lease (copyback sandboxes list)")
    .requiredOption("--allocation <id>", "the provider's allocation id, as listed: verified against the lease")
    .option("--acknowledge <action-id>", "an open recovery action that gives up these files (repeat for each)", collect, [])
    .requiredOption("--reason <text>", "why the files are given up")
    .action(
      run("sandboxes discard", async (ctx, opts: { lease: string; allocation: string; acknowledge: string[]; reason: string }) =>
        (await import("./sandboxes-discard")).sandboxesDiscard(ctx, opts),
      ),
    );
}
