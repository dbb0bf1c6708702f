// How a registered command runs: commander calls the action with its arguments, options and the
// command; the runner gives the command its context (instance root, environment, --json, the
// stderr note) and keeps the result for main.ts to render once.
import type { Command } from "commander";
import { readCliEnv } from "./env";
import { resolveInstanceRoot } from "./instance-root";
import type { CliIo, CommandContext, CommandResult } from "./io";

export type Runner = <A extends unknown[]>(
  name: string,
  fn: (ctx: CommandContext, ...a: A) => Promise<CommandResult>,
) => (...a: A) => Promise<void>;

/** The command being run (named as soon as commander picks it) and, once it returned, its result. */
export interface RunState {
  command: string;
  result?: CommandResult;
}

interface GlobalOptions {
  json?: boolean;
  home?: string;
}

export function commandRunner(io: CliIo, state: RunState): Runner {
  return <A extends unknown[]>(name: string, fn: (ctx: CommandContext, ...a: A) => Promise<CommandResult>) =>
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
}
