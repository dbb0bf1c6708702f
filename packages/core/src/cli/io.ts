// What a command hands back, and where the CLI writes. Commands never print: they return a
// result, and main.ts renders it once, as text or as one JSON document (`--json`).
import type { CliEnv } from "./env";
import type { ExitCode } from "./exit-codes";

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The environment (tests pass one; the bin reads it through env.ts). */
  env?: CliEnv;
}

export interface CommandResult {
  exitCode: ExitCode;
  /** The machine-readable answer (`--json`); main.ts adds `ok`, `command` and `exitCode`. */
  json: Record<string, unknown>;
  /** The human-readable answer, one line each (stdout). */
  text: string[];
}

export interface CommandContext {
  /** The instance root (resolved: --home, else COPYBACK_HOME, else ~/.copyback). */
  home: string;
  /** The environment as env.ts read it (DATABASE_URL for the `recovery` commands). */
  env: CliEnv;
  json: boolean;
  /** Progress and warnings for the operator: always stderr, so stdout stays one document. */
  note(line: string): void;
}

export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};
