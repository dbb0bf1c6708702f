// The `copyback` operator CLI (bin: packages/core/bin/copyback.mjs). Commands return a result;
// this file parses the command line (commander), renders the result as text or as exactly one
// JSON document on stdout (`--json`), and maps every failure to the exit-status table in
// exit-codes.ts. Expected failures print one clear line to stderr, never a stack trace.
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { archiveCheck } from "./commands/archive-check";
import { doctor } from "./commands/doctor";
import { locksList } from "./commands/locks-list";
import { manifestTake } from "./commands/manifest-take";
import { mergeCommand } from "./commands/merge";
import { readCliEnv } from "./env";
import { describeFailure } from "./errors";
import { EXIT, EXIT_CODE_TABLE } from "./exit-codes";
import { resolveInstanceRoot } from "./instance-root";
import { processIo, type CliIo, type CommandContext, type CommandResult } from "./io";
import type { ResolveOptions } from "./commands/recovery-resolve";
import { DEFAULT_RESOLVE_OUTCOME, OUTCOMES_NEEDING_NOTE, resolveHelpText } from "./recovery/resolve-help";
import { RESOLVE_OUTCOMES } from "../recovery/resolvable-holds";

interface GlobalOptions {
  json?: boolean;
  home?: string;
}

const HELP_FOOTER = `
Global options go before or after the command. The instance root is --home DIR, else
COPYBACK_HOME, else ~/.copyback. With --json, stdout holds exactly one JSON document
({ ok, command, exitCode, ... } or { ok: false, ..., error: { code, message } }); progress and
warnings always go to stderr.

The recovery and environment commands use DATABASE_URL, else the embedded database of the instance root, which
must be running (\`npm start\`); they are for instance operators with access to that database.

${EXIT_CODE_TABLE}
`;

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  // pnpm may forward a literal "--" before the arguments; it is not part of the command.
  const args = argv[0] === "--" ? argv.slice(1) : argv;
  const json = wantsJson(args);
  const state: { command: string; result?: CommandResult } = { command: "copyback" };

  const run =
    <A extends unknown[]>(
      name: string,
      fn: (ctx: CommandContext, ...a: A) => Promise<CommandResult>,
    ) =>
    async (...a: A): Promise<void> => {
      state.command = name;
      const cmd = a[a.length - 1] as Command;
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const env = io.env ?? readCliEnv();
      const ctx: CommandContext = {
        home: resolveInstanceRoot(globals.home, env),
        env,
        json: globals.json === true,
        note: (line) => io.stderr(`copyback ${name}: ${line}\n`),
      };
      state.result = await fn(ctx, ...a);
    };

  const program = buildProgram(io, run);
  // Name the command as soon as commander picks it, so a usage error reports it too.
  const track = (cmd: Command) => {
    cmd.hook("preSubcommand", (_parent, sub) => {
      state.command = commandPath(sub);
    });
    cmd.commands.forEach(track);
  };
  track(program);
  try {
    await program.parseAsync(args, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help / --version asked for: success. Help shown because no command was given, or any
      // parse error (commander has already printed it to stderr): a usage error.
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version")
        return EXIT.ok;
      if (json) {
        writeJson(io, {
          ok: false,
          command: state.command,
          exitCode: EXIT.usage,
          error: { code: "usage", message: error.message.replace(/^error: /, "") },
        });
      }
      return EXIT.usage;
    }
    const failure = describeFailure(error);
    if (json) {
      writeJson(io, {
        ok: false,
        command: state.command,
        exitCode: failure.exitCode,
        error: {
          code: failure.code,
          message: failure.message,
          ...(failure.details ? { details: failure.details } : {}),
        },
      });
    }
    io.stderr(
      `${state.command === "copyback" ? "copyback" : `copyback ${state.command}`}: ${failure.message}${failure.expected ? "" : " (unexpected error)"}\n`,
    );
    if (!failure.expected && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
    return failure.exitCode;
  }

  const result = state.result;
  if (result === undefined) return EXIT.usage; // unreachable: every command sets a result
  if (json) {
    writeJson(io, {
      ok: result.exitCode === EXIT.ok,
      command: state.command,
      exitCode: result.exitCode,
      ...result.json,
    });
  } else if (result.text.length > 0) {
    io.stdout(`${result.text.join("\n")}\n`);
  }
  return result.exitCode;
}

type Runner = <A extends unknown[]>(
  name: string,
  fn: (ctx: CommandContext, ...a: A) => Promise<CommandResult>,
) => (...a: A) => Promise<void>;

function buildProgram(io: CliIo, run: Runner): Command {
  const program = new Command("copyback");
  program
    .description(
      "Operator tools for the copyback engine: locks, archives, manifests, merges, recovery holds.",
    )
    .option("--json", "machine output: exactly one JSON document on stdout")
    .option("--home <dir>", "instance root (default: COPYBACK_HOME, else ~/.copyback)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
    })
    .showHelpAfterError("(run `copyback --help` for usage)")
    .addHelpText("after", HELP_FOOTER);

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

  addRecoveryCommands(program, run);
  addSandboxCommands(program, run);
  addWorkspaceCommands(program, run);
  return program;
}

// Loaded on use: the database client is not needed by the file-level commands above.
function addRecoveryCommands(program: Command, run: Runner): void {
  const recovery = program
    .command("recovery")
    .description("recovery actions (holds) in the instance database, for instance operators");
  const environment = program
    .command("environment")
    .description("the sandbox environments of the instance database: list them, change their configuration (rehearsal faults) and lease policy");
  environment
    .command("list")
    .description("every environment with its id, company, provider, plugin, lease policy and configuration")
    .option("--company <id>", "only this company's", uuid)
    .action(
      run("environment list", async (ctx, opts: { company?: string }) =>
        (await import("./commands/environment-list")).environmentList(ctx, { companyId: opts.company }),
      ),
    );
  environment
    .command("configure")
    .argument("<environment-id>", "the environment (copyback environment list)", uuid)
    .description(
      "change an environment's configuration, checked by its provider's schema, and/or its lease policy (a refused change writes nothing; an applied one is recorded in the activity log): set or clear the rehearsal faults of README \"Rehearsing recovery\", replace the whole configuration, or set the policy sandboxes acquired from now on use",
    )
    .option("--faults <json>", 'set config.faults, keeping every other key (local: \'{"failExports":9}\')')
    .option("--clear-faults", "remove config.faults")
    .option("--config <file>", "replace the whole configuration with this JSON file")
    .option(
      "--lease-policy <policy>",
      "set the lease policy new sandboxes are acquired with: ephemeral, reuse_by_environment or retain_on_failure (existing leases keep theirs); alone or with one configuration change",
    )
    .action(
      run("environment configure", async (ctx, environmentId: string, opts: { faults?: string; clearFaults?: boolean; config?: string; leasePolicy?: string }) =>
        (await import("./commands/environment-configure")).environmentConfigure(ctx, environmentId, opts),
      ),
    );
  recovery
    .command("list")
    .description("open recovery actions: company, task, run, cause, age and next action")
    .option("--company <id>", "only this company's", uuid)
    .option("--limit <n>", "at most this many, oldest first (default 200)", positiveInt)
    .action(
      run("recovery list", async (ctx, opts: { company?: string; limit?: number }) => {
        const { recoveryList, DEFAULT_LIST_LIMIT } = await import("./commands/recovery-list");
        return recoveryList(ctx, {
          limit: opts.limit ?? DEFAULT_LIST_LIMIT,
          ...(opts.company === undefined ? {} : { companyId: opts.company }),
        });
      }),
    );
  recovery
    .command("show")
    .argument("<action-id>", "the recovery action", uuid)
    .description("one action: evidence, owner token, the run now, and the exact attestation calls")
    .action(
      run("recovery show", async (ctx, actionId: string) =>
        (await import("./commands/recovery-show")).recoveryShow(ctx, actionId),
      ),
    );
  recovery
    .command("attest")
    .description(
      "attest that an unverified copyback owner's controller and its copyback subprocesses stopped (R-ATT-1); the reconciler then finishes the copyback. Recorded as the system actor",
    )
    .requiredOption("--action <id>", "the unverified-owner recovery action")
    .requiredOption("--run <id>", "its run")
    .requiredOption("--token <token>", "the owner token the action names (copyback recovery show)")
    .requiredOption(
      "--controller-and-copyback-stopped",
      "required: you verified on the deployment platform that they stopped",
    )
    .requiredOption("--evidence <text>", "what the platform shows (recorded on the action)")
    .action(
      run(
        "recovery attest",
        async (
          ctx,
          opts: {
            action: string;
            run: string;
            token: string;
            evidence: string;
            controllerAndCopybackStopped: boolean;
          },
        ) => (await import("./commands/recovery-attest")).recoveryAttest(ctx, opts),
      ),
    );
  recovery
    .command("retry-export")
    .description(
      "request the export-only retry of a run whose export retries were exhausted (R-EX-2): the exact retained sandbox is resumed and verified, then the same run copies its saved result (no agent turn). Recorded as the system actor",
    )
    .requiredOption("--issue <id>", "the task", uuid)
    .requiredOption("--action <id>", "the export-retry recovery action")
    .requiredOption("--run <id>", "its run")
    .requiredOption("--note <text>", "what you repaired and how the sandbox's files were preserved (recorded on the action)")
    .action(
      run("recovery retry-export", async (ctx, opts: { issue: string; action: string; run: string; note: string }) =>
        (await import("./commands/recovery-retry-export")).recoveryRetryExport(ctx, opts),
      ),
    );
  recovery
    .command("reconstruct")
    .description(
      "continue a task from saved sources after its sandbox's confirmed destruction (R-RC-2): the surviving attachments, a description of the missing work and the observed outcomes of external actions; a fresh run of the task's agent follows. Recorded as the system actor",
    )
    .requiredOption("--issue <id>", "the task", uuid)
    .requiredOption("--action <id>", "the export-failure recovery action whose sandbox was discarded")
    .requiredOption("--run <id>", "its run (the source)")
    .requiredOption("--lease <id>", "its destroyed lease")
    .requiredOption("--description <text>", "the missing work, for the fresh session")
    .requiredOption("--status-version <n>", "the task's status version you saw (copyback recovery show)", wholeNumber)
    .option("--attachment <id>", "a surviving attachment of the task (repeat for each)", collect, [])
    .option("--outcome <outcome=action>", "an external action and what you observed: performed=..., not_performed=... or unknown=... (repeat for each)", collect, [])
    .option("--request-id <id>", "idempotency key (default: a fresh one)")
    .action(
      run("recovery reconstruct", async (ctx, opts: { issue: string; action: string; run: string; lease: string; description: string; statusVersion: number; attachment: string[]; outcome: string[]; requestId?: string }) =>
        (await import("./commands/recovery-reconstruct")).recoveryReconstruct(ctx, opts),
      ),
    );
  recovery
    .command("resolve")
    .description(
      "record a file hold's repair or a board disposition (R-RR-5, R-FO-5): one of the holds listed below, with the task's unchanged status, the source run and lease, and the evidence its outcome needs; changes nothing else. Recorded as the system actor",
    )
    .addHelpText("after", resolveHelpText())
    .requiredOption("--action <id>", "the recovery action")
    .option("--outcome <outcome>", `${RESOLVE_OUTCOMES.join(", ")} (default ${DEFAULT_RESOLVE_OUTCOME}; the evidence each needs is listed below)`)
    .requiredOption("--source-status <status>", "the task's current status, unchanged (copyback recovery show)")
    .requiredOption("--run <id>", "the source run the action records")
    .option("--lease <id>", "the retained lease the action records")
    .requiredOption("--run-status <status>", "the source run's status as you reconciled it")
    .option("--no-external-actions", "only for a cancelled native run whose history shows it performed none")
    .option("--stop-evidence <text>", "how you verified the exact allocation stopped")
    .option("--recovered-files <text>", "which files you recovered, and where")
    .option("--note <text>", `why (required for ${OUTCOMES_NEEDING_NOTE.join(" and ")})`)
    .action(
      run("recovery resolve", async (ctx, opts: ResolveOptions & { externalActions?: boolean }) => {
        // commander turns --no-external-actions into externalActions: false.
        const { externalActions, ...rest } = opts;
        return (await import("./commands/recovery-resolve")).recoveryResolve(ctx, { ...rest, noExternalActions: externalActions === false });
      }),
    );
}

// Retained sandboxes (issue 14 section 2), loaded on use like the recovery commands.
function addSandboxCommands(program: Command, run: Runner): void {
  const sandboxes = program.command("sandboxes").description("retained sandbox allocations, for instance operators");
  sandboxes
    .command("list")
    .description("every retained allocation: why, its run and task, provider, plugin, allocation id, age and size")
    .option("--company <id>", "only this company's", uuid)
    .option("--limit <n>", "at most this many, oldest first (default 200)", positiveInt)
    .action(
      run("sandboxes list", async (ctx, opts: { company?: string; limit?: number }) => {
        const { sandboxesList, DEFAULT_SANDBOX_LIMIT } = await import("./commands/sandboxes-list");
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
        (await import("./commands/sandboxes-discard")).sandboxesDiscard(ctx, opts),
      ),
    );
}

// Workspace history (issue 14 section 2), loaded on use.
function addWorkspaceCommands(program: Command, run: Runner): void {
  const workspace = program.command("workspace").description("host workspaces: what the committed runs wrote there");
  workspace
    .command("history")
    .argument("<path>", "a file or directory inside a host workspace (absolute, or relative to here)")
    .description("which committed runs last wrote or deleted PATH, and when, newest first")
    .option("--limit <n>", "at most this many (default 20)", positiveInt)
    .action(
      run("workspace history", async (ctx, target: string, opts: { limit?: number }) => {
        const { workspaceHistory, DEFAULT_HISTORY_LIMIT } = await import("./commands/workspace-history");
        return workspaceHistory(ctx, { path: target, limit: opts.limit ?? DEFAULT_HISTORY_LIMIT });
      }),
    );
}

/** "archive check" for the `check` subcommand of `archive`; the program itself is not named. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function milliseconds(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n))
    throw new InvalidArgumentError("expected a whole number of milliseconds");
  return n;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuid(value: string): string {
  if (!UUID.test(value)) throw new InvalidArgumentError("expected an id (a UUID)");
  return value.toLowerCase();
}

function wholeNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError("expected a whole number");
  return n;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError("expected a whole number of at least 1");
  return n;
}

/** `--json` before the `--` end-of-options marker, wherever it sits relative to the command. */
function wantsJson(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).includes("--json");
}

function writeJson(io: CliIo, doc: Record<string, unknown>): void {
  io.stdout(`${JSON.stringify(doc, null, 2)}\n`);
}
