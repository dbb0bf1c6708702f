// The agent's turn in its prepared sandbox: the runtime selection (the exact allocation the
// durable descriptor says was seeded), then the agent's command through the provider's exec with
// its own run key, its output in the run log and its process recorded, and the events of its exit
// and resource limits.
import { DomainError } from "../errors";
import { loadPreparedWorkspace } from "../finalization/workspace-descriptor";
import { requireCapability } from "../providers/registry";
import type { EnvironmentProvider, ExecResult, LeaseHandle } from "../providers/types";
import { recordAgentProcess } from "../records/agent-process";
import { mintRunAgentKey, revokeRunAgentKeys, RUN_AGENT_KEY_VARIABLE } from "../runs/run-agent-key";
import type { PreparedRunWorkspace } from "../workspace/prepare-run-workspace";
import type { AgentExit } from "./agent-outcome";
import { AgentOutputRecorder, DEFAULT_OUTPUT_LIMITS } from "./agent-output";
import type { ReadyRunContext } from "./run-context";
import type { RunLeaseState } from "./run-lease-state";
import type { RunScope } from "./run-scope";

/**
 * Runtime selection: the lease's pinned plugin with the exec capability, in the exact allocation
 * the durable descriptor says was seeded. The descriptor is read back from the database (not the
 * copy in memory), so what the agent works on is what finalization will diff against; a missing,
 * malformed or mismatching descriptor stops the run before the agent starts.
 */
export async function selectRuntime(run: RunScope, context: ReadyRunContext, handle: LeaseHandle, plugin: EnvironmentProvider, prepared: PreparedRunWorkspace): Promise<void> {
  const descriptor = await loadPreparedWorkspace(run.deps.db, { companyId: context.companyId, runId: context.runId, issueId: context.issueId });
  if (descriptor.leaseId !== handle.leaseId || descriptor.seed.providerLeaseId !== handle.providerLeaseId || descriptor.seed.fingerprint !== prepared.descriptor.seed.fingerprint) {
    throw new DomainError("conflict", "prepared_workspace_mismatch", "The prepared workspace names another sandbox than the run's lease.");
  }
  requireCapability(plugin, "exec");
}

export interface AgentTurnInput {
  context: ReadyRunContext;
  handle: LeaseHandle;
  plugin: EnvironmentProvider;
  /** A Stop's signal: it ends the agent's exec (R-RC-7). */
  signal: AbortSignal;
  /** The reconstruction variables the agent gets (reconstruction-handoff.ts), or null for an ordinary run. */
  reconstructionEnv: Record<string, string> | null;
  /** R-PV-1: where the verified agent pack is (COPYBACK_AGENT_PACK_DIR), {} without a pack. */
  packEnv: Record<string, string>;
}

export async function runAgent(run: RunScope, lease: RunLeaseState, input: AgentTurnInput): Promise<ExecResult> {
  const { context, handle, plugin, signal } = input;
  const { deps, log } = run;
  const { db } = deps;
  // R-EX-6: the registry's one capability rule (advertised and implemented), a typed refusal otherwise.
  requireCapability(plugin, "exec");
  const runExec = plugin.exec as NonNullable<EnvironmentProvider["exec"]>;
  const output = new AgentOutputRecorder(db, { companyId: context.companyId, runId: context.runId }, log, deps.outputLimits ?? DEFAULT_OUTPUT_LIMITS);
  // The agent's own key for this run's finish call, revoked when its turn is over (and by the
  // database whenever the run ends, see runs/run-agent-key.ts).
  const runKey = await mintRunAgentKey(db, { companyId: context.companyId, agentId: context.agentId, runId: context.runId });
  const env: Record<string, string> = {
    ...context.adapter.env,
    COPYBACK_RUN_ID: context.runId,
    COPYBACK_ISSUE_ID: context.issueId,
    ...(deps.apiUrl ? { COPYBACK_API_URL: deps.apiUrl } : {}),
    [RUN_AGENT_KEY_VARIABLE]: runKey.secret,
    // R-RC-5: the fresh session's context: description, attachments with their hashes to verify
    // and where to read them (`path`, placed at the handoff; contentUrl), outcomes. Inline while small, and
    // as a file among the inputs where the provider places them (context-delivery.ts).
    ...(input.reconstructionEnv ?? {}),
    ...input.packEnv,
  };
  const started = Date.now();
  let exec: ExecResult;
  try {
    lease.agentLaunching();
    exec = await runExec.call(plugin, handle, {
      argv: context.argv,
      env,
      timeoutMs: context.adapter.timeoutSeconds * 1000,
      signal,
      onStart: async (process) => {
        // Stamped before any output line (the recorder holds lines until now).
        const startedAt = output.started();
        // R-OWN-12: the agent's process identity, recorded before it can do anything lasting.
        if (process) await recordAgentProcess(db, context.runId, process).catch((error: unknown) => log.warn({ runId: context.runId, err: error }, "could not record the agent process"));
        await run.event(
          "info",
          "agent.started",
          `The agent started${process ? ` (pid ${process.pid})` : ""}.`,
          { argv: context.argv, process: process ? { ...process } : null, timeoutSeconds: context.adapter.timeoutSeconds },
          startedAt,
        );
      },
      onOutput: (stream, chunk) => output.write(stream, chunk),
    });
  } finally {
    await revokeRunAgentKeys(db, context.runId).catch((error: unknown) => log.warn({ runId: context.runId, err: error }, "could not revoke the run's agent key (it ends with the run)"));
    const summary = await output.close();
    if (summary.truncated) log.warn({ runId: context.runId, ...summary }, "agent output truncated");
  }
  await run.event(exec.exitCode === 0 ? "info" : "warn", "agent.exited", describeExit(exec), {
    exitCode: exec.exitCode,
    signal: exec.signal,
    timedOut: exec.timedOut,
    cancelled: exec.cancelled,
    durationMs: Date.now() - started,
    resultFile: exec.resultFile !== null,
    ...(exec.resourceLimits ? { resourceLimits: { ...exec.resourceLimits, enforcement: { ...exec.resourceLimits.enforcement } } } : {}),
  });
  if (exec.resourceLimits) {
    // Shown in the run's log on the run page: what the agent ran under, and what it hit.
    const { summary, hit } = exec.resourceLimits;
    await run.event(hit ? "warn" : "info", hit ? "agent.resource_limit" : "agent.limits", hit ? `The agent hit a resource limit (${hit}). Limits: ${summary}.` : `Resource limits: ${summary}.`, {
      hit,
      enforcement: { ...exec.resourceLimits.enforcement },
    });
  }
  return exec;
}

/** The exec's answer as the after-agent decision reads it (agent-outcome.ts). */
export function exitOf(exec: ExecResult): AgentExit {
  return { exitCode: exec.exitCode, signal: exec.signal, timedOut: exec.timedOut, cancelled: exec.cancelled, resourceLimit: exec.resourceLimits?.hit ?? null };
}

function describeExit(exec: ExecResult): string {
  if (exec.cancelled) return "The agent was cancelled.";
  if (exec.timedOut) return "The agent ran past its time limit and was killed.";
  if (exec.exitCode === null) return `The agent was killed by ${exec.signal ?? "a signal"}.`;
  return `The agent exited with code ${exec.exitCode}.`;
}
