// The file-level commands: the instance root's locks and health, archives, manifests and the
// merge. They need no database, so their modules load with the program.
import type { Command } from "commander";
import { collect, milliseconds } from "../arguments";
import type { Runner } from "../runner";
import { archiveCheck } from "./archive-check";
import { doctor } from "./doctor";
import { locksList } from "./locks-list";
import { manifestTake } from "./manifest-take";
import { mergeCommand } from "./merge";

export function registerFileCommands(program: Command, run: Runner): void {
  const locks = program.command("locks").description("directory-merge locks of the instance root");
  locks
    .command("list")
    .description("every lock: held or free (probed), owner sidecar, waiters, legacy directories")
    .action(run("locks list", (ctx) => locksList(ctx)));

  const archive = program.command("archive").description("tar archives returned by sandboxes");
  archive
    .command("check")
    .argument("<file>", "archive to validate (tar or tar.gz)")
    .description("validate an archive and explain each violation (exit 0 safe, 1 rejected)")
    .action(run("archive check", (_ctx, file: string) => archiveCheck(file)));

  program
    .command("merge")
    .description(
      "validate an archive, extract it into <home>/staging and merge it into the target under its directory-merge lock",
    )
    .requiredOption(
      "--baseline <manifest.json>",
      "baseline manifest (from `copyback manifest take`)",
    )
    .requiredOption("--archive <file.tar>", "the returned workspace archive")
    .requiredOption("--target <dir>", "host workspace directory to merge into")
    .option("--exclude <pattern>", "excluded tree, preserved on the host (repeatable)", collect, [])
    .option(
      "--no-retries",
      "one attempt only (R-RR-1: default is up to 3 for failures before any host write)",
    )
    .option(
      "--lock-timeout <ms>",
      "wait for the target's lock at most this long per attempt (default 30000)",
      milliseconds,
    )
    .action(
      run(
        "merge",
        (
          ctx,
          opts: {
            baseline: string;
            archive: string;
            target: string;
            exclude: string[];
            retries: boolean;
            lockTimeout?: number;
          },
        ) =>
          mergeCommand(ctx, {
            baseline: opts.baseline,
            archive: opts.archive,
            target: opts.target,
            exclude: opts.exclude,
            retries: opts.retries,
            ...(opts.lockTimeout === undefined ? {} : { lockTimeoutMs: opts.lockTimeout }),
          }),
      ),
    );

  const manifest = program.command("manifest").description("workspace manifests (merge baselines)");
  manifest
    .command("take")
    .argument("<dir>", "directory to describe")
    .description("record every entry's path, type, mode, sha256 and link target (a baseline)")
    .option("-o, --output <file>", "write the manifest here (atomically) instead of stdout")
    .option("--exclude <pattern>", "excluded tree (repeatable)", collect, [])
    .action(
      run("manifest take", (ctx, dir: string, opts: { output?: string; exclude: string[] }) =>
        manifestTake(dir, {
          exclude: opts.exclude,
          json: ctx.json,
          ...(opts.output === undefined ? {} : { output: opts.output }),
        }),
      ),
    );

  program
    .command("doctor")
    .description("instance root privacy, filesystem type (lockable or refused), lock root health")
    .action(run("doctor", (ctx) => doctor(ctx)));
}
