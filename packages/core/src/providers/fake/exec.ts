// The fake's exec: no real process. A script (the test's, or the turn the environment's config
// armed, config.ts) decides the outcome; its workspace changes, output and result file are applied
// as a real agent's would be, and the request's timeout and abort win over a script that hangs.
import { DomainError } from "../../errors";
import type { ExecRequest, ExecResult, LeaseHandle } from "../types";
import type { FakeTurnConfig } from "./config";
import type { FakeSandbox } from "./sandbox";
import { applyChanges, type FakeFileChange, type FakeWorkspace } from "./virtual-workspace";

export interface FakeExecOutcome {
  exitCode?: number | null;
  signal?: string | null;
  stdout?: string;
  stderr?: string;
  /** What the agent wrote to its result file (null: nothing). */
  resultFile?: string | null;
  /** Workspace changes: path -> text, bytes, { symlink }, { directory: true } or null (delete). */
  files?: Readonly<Record<string, FakeFileChange>>;
}

export interface FakeExecContext {
  lease: LeaseHandle;
  request: ExecRequest;
  /** The sandbox's workspace; a script may also change it directly. */
  workspace: FakeWorkspace;
  /** R-RC-5: the placed inputs, by the path the agent was told (read-only: a copy). */
  inputs: ReadonlyMap<string, Uint8Array>;
  signal: AbortSignal;
}

export type FakeExecScript = (context: FakeExecContext) => FakeExecOutcome | Promise<FakeExecOutcome>;

/** The turn an environment's config scripted ({runId} filled in); without one, exit 0 and no changes. */
export function configuredTurn(turn: FakeTurnConfig | undefined, context: FakeExecContext): FakeExecOutcome {
  if (!turn) return { exitCode: 0 };
  const runId = context.request.env.COPYBACK_RUN_ID ?? "";
  const fill = (text: string) => text.replaceAll("{runId}", runId);
  const files: Record<string, FakeFileChange> = {};
  for (const [path, content] of Object.entries(turn.files)) files[fill(path)] = content === null ? null : fill(content);
  return { exitCode: turn.exitCode, resultFile: turn.resultFile === null ? null : fill(turn.resultFile), files };
}

export async function runScript(script: FakeExecScript, sandbox: FakeSandbox, lease: LeaseHandle, request: ExecRequest): Promise<ExecResult> {
  if (sandbox.state === "stopped") {
    throw new DomainError("conflict", "provider_sandbox_stopped", `The sandbox of lease ${lease.leaseId} is stopped.`);
  }
  const base: ExecResult = { exitCode: null, signal: null, timedOut: false, cancelled: false, process: null, resultFile: null };
  if (request.signal?.aborted) return { ...base, cancelled: true };
  // No real process: onStart learns that there is none to record.
  await request.onStart?.(null);
  const controller = new AbortController();
  const stopped = new Promise<"timeout" | "cancelled">((resolve) => {
    const timer = setTimeout(() => resolve("timeout"), request.timeoutMs);
    controller.signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
    if (request.signal?.aborted) resolve("cancelled");
    else request.signal?.addEventListener("abort", () => resolve("cancelled"), { once: true });
  });
  try {
    const outcome = await Promise.race([script({ lease, request, workspace: sandbox.workspace, inputs: new Map(sandbox.inputs ?? []), signal: controller.signal }), stopped]);
    if (outcome === "timeout") return { ...base, signal: "SIGKILL", timedOut: true };
    if (outcome === "cancelled") return { ...base, signal: "SIGKILL", cancelled: true };
    if (outcome.files) applyChanges(sandbox.workspace, outcome.files);
    if (outcome.stdout) request.onOutput?.("stdout", outcome.stdout);
    if (outcome.stderr) request.onOutput?.("stderr", outcome.stderr);
    return { ...base, exitCode: outcome.exitCode === undefined ? 0 : outcome.exitCode, signal: outcome.signal ?? null, resultFile: outcome.resultFile ?? null };
  } finally {
    controller.abort();
  }
}
