// Copyback's own commands in a sandbox (tar, sha256sum, find): `process.executeCommand`, whose
// output is stdout and stderr together. Each script is written to be safe to run again (a
// retried call after a 5xx may find the work done). A nonzero exit is a typed provider error
// with the script's last words; abort cuts the wait short (the command is left to its timeout).
import type { Sandbox } from "@daytonaio/sdk";
import { DomainError } from "../../errors";
import type { DaytonaClient } from "./client";

export interface ScriptResult {
  exitCode: number;
  output: string;
}

export interface ScriptOptions {
  what: string;
  timeoutSec: number;
  signal?: AbortSignal | undefined;
  /** Exit codes answered as they are instead of thrown (the script's own verdicts). */
  allow?: readonly number[];
}

function abortable<T>(call: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return call;
  if (signal.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    call.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

export async function runScript(client: DaytonaClient, sandbox: Sandbox, script: string, options: ScriptOptions): Promise<ScriptResult> {
  const answer = await abortable(
    client.call(options.what, () => sandbox.process.executeCommand(`sh -c ${quoteScript(script)}`, undefined, undefined, options.timeoutSec), {
      sandboxId: sandbox.id,
      ...(options.signal ? { signal: options.signal } : {}),
    }),
    options.signal,
  );
  const exitCode = typeof answer.exitCode === "number" ? answer.exitCode : -1;
  const output = typeof answer.result === "string" ? answer.result : "";
  if (exitCode !== 0 && !(options.allow ?? []).includes(exitCode)) {
    throw new DomainError("unavailable", "provider_command_failed", `${options.what} failed in the Daytona sandbox (exit ${exitCode}): ${output.trim().slice(-300)}`, { exitCode });
  }
  return { exitCode, output };
}

function quoteScript(script: string): string {
  return `'${script.replace(/'/g, `'\\''`)}'`;
}
