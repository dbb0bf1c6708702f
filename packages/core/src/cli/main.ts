// The `copyback` operator CLI (bin: packages/core/bin/copyback.mjs). Commands return a result;
// this file parses the command line (commander), renders the result as text or as exactly one
// JSON document on stdout (`--json`), and maps every failure to the exit-status table in
// exit-codes.ts. Expected failures print one clear line to stderr, never a stack trace. The
// commands are registered by group (commands/register-*.ts).
import { Command, CommanderError } from "commander";
import { registerAgentCommands } from "./commands/register-agent";
import { registerEnvironmentCommands } from "./commands/register-environment";
import { registerFileCommands } from "./commands/register-files";
import { registerRecoveryCommands } from "./commands/register-recovery";
import { registerSandboxCommands } from "./commands/register-sandboxes";
import { registerWorkspaceCommands } from "./commands/register-workspace";
import { describeFailure } from "./errors";
import { EXIT, EXIT_CODE_TABLE } from "./exit-codes";
import { processIo, type CliIo } from "./io";
import { commandRunner, type RunState, type Runner } from "./runner";

const HELP_FOOTER = `
Global options go before or after the command. The instance root is --home DIR, else
COPYBACK_HOME, else ~/.copyback. With --json, stdout holds exactly one JSON document
({ ok, command, exitCode, ... } or { ok: false, ..., error: { code, message } }); progress and
warnings always go to stderr.

The recovery, environment and agent commands use DATABASE_URL, else the embedded database of the instance root, which
must be running (\`npm start\`); they are for instance operators with access to that database.

${EXIT_CODE_TABLE}
`;

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  // pnpm may forward a literal "--" before the arguments; it is not part of the command.
  const args = argv[0] === "--" ? argv.slice(1) : argv;
  const json = wantsJson(args);
  const state: RunState = { command: "copyback" };

  const program = buildProgram(io, commandRunner(io, state));
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

  // The order of registration is the order `copyback --help` lists the commands in.
  registerFileCommands(program, run);
  registerRecoveryCommands(program, run);
  registerEnvironmentCommands(program, run);
  registerAgentCommands(program, run);
  registerSandboxCommands(program, run);
  registerWorkspaceCommands(program, run);
  return program;
}

/** "archive check" for the `check` subcommand of `archive`; the program itself is not named. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** `--json` before the `--` end-of-options marker, wherever it sits relative to the command. */
function wantsJson(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).includes("--json");
}

function writeJson(io: CliIo, doc: Record<string, unknown>): void {
  io.stdout(`${JSON.stringify(doc, null, 2)}\n`);
}
