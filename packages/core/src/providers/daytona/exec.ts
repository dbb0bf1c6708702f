// exec: the agent's command in a Daytona session (`process.createSession` +
// `executeSessionCommand(runAsync)`), its output streamed to the caller's sink as it arrives
// (`getSessionCommandLogs` with callbacks: the toolbox's follow WebSocket), its exit code read
// back with `getSessionCommand`. A timeout or an abort deletes the session, which kills what it
// runs. argv is never given to a shell as text: every word is quoted. The result file
// (COPYBACK_RESULT_FILE, outside the exported tree) is read once after the exit, then removed.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Sandbox } from "@daytonaio/sdk";
import { DomainError } from "../../errors";
import { checkExecRequest, cwdComponents, RESULT_FILE_VARIABLE } from "../local/exec-environment";
import type { ExecRequest, ExecResult, LeaseHandle } from "../types";
import type { DaytonaClient } from "./client";
import { runScript } from "./commands";
import { LAYOUT, shellQuote } from "./layout";
import { takeResultFile } from "./result-file";
import type { DaytonaSandboxes } from "./sandboxes";

/** Copyback's exec sessions (busy.ts looks for running commands in them). */
export const EXEC_SESSION_PREFIX = "copyback-exec-";

/** How often the exit code is asked for once the output stream ended (then every second). */
const EXIT_POLL_MS = 100;
const EXIT_POLLS = 50;
/** Daytona's auto-stop counts API activity, not a running process: a long agent keeps its sandbox awake. */
const ACTIVITY_MS = 60_000;

/** Pure: the shell text that runs argv in the workspace with the request's variables. */
export function agentCommand(request: ExecRequest): string {
  const cwd = cwdComponents(request.cwd);
  if (cwd === null) throw new DomainError("invalid", "exec_cwd_invalid", `The working directory ${JSON.stringify(request.cwd)} is outside the workspace.`);
  const dir = [LAYOUT.workspace, ...cwd].join("/");
  const exports = Object.entries(request.env).map(([name, value]) => `export ${name}=${shellQuote(value)}`);
  const script = [
    `rm -f ${shellQuote(LAYOUT.resultFile)}`,
    `mkdir -p ${shellQuote(LAYOUT.agentDir)}`,
    // An absolute path, as the agent's own process sees the sandbox (the working directory is the sandbox's).
    `export ${RESULT_FILE_VARIABLE}="$PWD/${LAYOUT.resultFile}"`,
    ...exports,
    `cd ${shellQuote(dir)}`,
    `exec ${request.argv.map(shellQuote).join(" ")}`,
  ].join("\n");
  // Its own shell: the session's shell keeps nothing of it, and exec replaces only this one.
  return `sh -c ${shellQuote(script)}`;
}

/**
 * The exit code once the command has one: asked until then, or until `stopped()` (the timeout or
 * an abort, which kill it). `stillRunning` is told when the first answer has none: the output
 * stream ended before the command did (a dropped connection), so the rest comes from the logs.
 */
async function waitForExit(client: DaytonaClient, sandbox: Sandbox, session: string, cmdId: string, stopped: () => boolean, stillRunning: () => void): Promise<number | null> {
  for (let i = 0; !stopped(); i++) {
    const command = await client.call("reading the agent's exit", () => sandbox.process.getSessionCommand(session, cmdId), { sandboxId: sandbox.id });
    if (typeof command.exitCode === "number") return command.exitCode;
    if (i === 0) stillRunning();
    await sleep(i < EXIT_POLLS ? EXIT_POLL_MS : 1_000);
  }
  return null;
}

export async function execInSandbox(sandboxes: DaytonaSandboxes, lease: LeaseHandle, request: ExecRequest): Promise<ExecResult> {
  checkExecRequest(request);
  const command = agentCommand(request);
  const base: ExecResult = { exitCode: null, signal: null, timedOut: false, cancelled: false, process: null, resultFile: null };
  if (request.signal?.aborted) return { ...base, cancelled: true };
  const { client, sandbox } = await sandboxes.open(lease);
  if (sandbox.state !== "started") throw new DomainError("conflict", "provider_sandbox_stopped", "The sandbox is stopped; resume it first.");
  await runScript(client, sandbox, `mkdir -p ${shellQuote(LAYOUT.workspace)}`, { what: "preparing the agent's run", timeoutSec: 60 });

  const session = `${EXEC_SESSION_PREFIX}${randomUUID()}`;
  await client.call("opening a session", () => sandbox.process.createSession(session), { sandboxId: sandbox.id });
  let stopReason: "timeout" | "cancelled" | null = null;
  let killing: Promise<void> | null = null;
  const kill = (reason: "timeout" | "cancelled") => {
    if (stopReason) return;
    stopReason = reason;
    // Deleting the session kills every process it runs.
    killing = client.call("stopping the agent", () => sandbox.process.deleteSession(session), { sandboxId: sandbox.id }).catch(() => undefined);
  };
  const timer = setTimeout(() => kill("timeout"), request.timeoutMs);
  const keepAwake = setInterval(() => void sandbox.refreshActivity().catch(() => undefined), ACTIVITY_MS);
  const onAbort = () => kill("cancelled");
  request.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    // Not repeated on a 5xx: the agent may have started; it is never started twice.
    const started = await sandbox.process.executeSessionCommand(session, { command, runAsync: true });
    const cmdId = started.cmdId;
    if (typeof cmdId !== "string") throw new DomainError("unavailable", "provider_daytona_unavailable", "Daytona did not say which command it started.");
    try {
      await request.onStart?.(null);
    } catch (error) {
      kill("cancelled");
      throw error;
    }
    // The follow stream ends when the command exits (or when the session is deleted).
    const streamed = { stdout: 0, stderr: 0 };
    let followed = true;
    await sandbox.process
      .getSessionCommandLogs(
        session,
        cmdId,
        (chunk) => {
          streamed.stdout += chunk.length;
          request.onOutput?.("stdout", chunk);
        },
        (chunk) => {
          streamed.stderr += chunk.length;
          request.onOutput?.("stderr", chunk);
        },
      )
      .catch(() => (followed = false));
    if (stopReason) {
      await killing;
      return { ...base, timedOut: stopReason === "timeout", cancelled: stopReason === "cancelled" };
    }
    const exitCode = await waitForExit(client, sandbox, session, cmdId, () => stopReason !== null, () => (followed = false));
    if (!followed) {
      // The stream broke: what it had not delivered yet comes from the stored logs.
      const logs = await client.call("reading the agent's output", () => sandbox.process.getSessionCommandLogs(session, cmdId), { sandboxId: sandbox.id });
      const restOut = (logs.stdout ?? "").slice(streamed.stdout);
      const restErr = (logs.stderr ?? "").slice(streamed.stderr);
      if (restOut) request.onOutput?.("stdout", restOut);
      if (restErr) request.onOutput?.("stderr", restErr);
    }
    if (stopReason) {
      await killing;
      return { ...base, timedOut: stopReason === "timeout", cancelled: stopReason === "cancelled" };
    }
    const reading = await takeResultFile(client, sandbox);
    if (reading.kind === "refused") request.onOutput?.("stderr", `\ncopyback: ${reading.note}; it was ignored.\n`);
    return { ...base, exitCode, resultFile: reading.kind === "read" ? reading.text : null };
  } finally {
    clearTimeout(timer);
    clearInterval(keepAwake);
    request.signal?.removeEventListener("abort", onAbort);
    if (!stopReason) await client.call("closing the session", () => sandbox.process.deleteSession(session), { sandboxId: sandbox.id }).catch(() => undefined);
  }
}
