// R-PV-1: before the agent's turn, the controller places the agent's pack in the sandbox and
// verifies it there: the pack's tree digest and its runtime's version, read by a command run through
// the provider's exec (pack-format.ts VERIFY_SCRIPT), each read bounded by a 30 s transport timeout.
// What a read proves and what follows is pack-verification-policy.ts; each read is recorded on the
// run before it is acted on (records/agent-pack-verification.ts), so a reattachment continues the
// budget. This file is the I/O: read the host copy, place it, run the reads, record them.
//
// An agent without `agentPack` in its adapter settings runs as before, without a pack (the
// packages README says why). A database failure here throws: the caller requeues the run as for
// every step before the agent's start (database-outage-policy.ts).
import { messageOf } from "../errors";
import { AGENT_PACK_DIR_VARIABLE, parseVerifyReport, verifyArgv } from "../providers/agent-pack/pack-format";
import { readHostAgentPack, type HostAgentPack } from "../providers/agent-pack/read-pack";
import { hasCapability } from "../providers/registry";
import type { EnvironmentProvider, LeaseHandle } from "../providers/types";
import { readPackVerification, recordPackRead, type PackRead } from "../records/agent-pack-verification";
import type { AgentPackConfig } from "../records/adapter-config";
import {
  classifyRead,
  decideAfterRead,
  decideBeforeRead,
  decideHostPack,
  INCOMPATIBLE_CODES,
  PACK_READ_TIMEOUT_MS,
  type PackStep,
  type ReadObservation,
} from "./pack-verification-policy";
import type { RunScope } from "./run-scope";

export type PackVerification =
  /** The agent names no pack: nothing to verify. */
  | { kind: "none" }
  /** The turn may start; `env` tells the agent where the pack is. */
  | { kind: "verified"; env: Record<string, string> }
  /** The pack cannot be used (incompatible, unreadable, unsupported): the run fails with `code`, no agent. */
  | { kind: "refused"; code: string; message: string }
  /** Two inconclusive reads: the caller holds the run (pack-verification-hold.ts). */
  | { kind: "hold"; pack: HostAgentPack; reads: PackRead[] }
  /** A Stop ended a read. */
  | { kind: "stopped" }
  /** The run is no longer this controller's (its row changed): nothing more is done here. */
  | { kind: "lost" };

/** Bytes of a read's standard output kept: the report is two short lines. */
const MAX_REPORT_CHARS = 64 * 1024;

export interface PackTarget {
  runId: string;
  pack: AgentPackConfig | undefined;
  handle: LeaseHandle;
  plugin: EnvironmentProvider;
  /** A Stop's signal. */
  signal: AbortSignal;
}

export async function verifyAgentPack(run: RunScope, target: PackTarget): Promise<PackVerification> {
  const { pack: config, plugin, handle } = target;
  if (!config) return { kind: "none" };
  if (!hasCapability(plugin, "agentPack")) {
    return { kind: "refused", code: "agent_pack_unsupported", message: `The agent names an agent pack, but the provider plugin ${plugin.pluginId} cannot place one.` };
  }
  let host: HostAgentPack;
  try {
    host = await readHostAgentPack(config.directory);
  } catch (error) {
    return { kind: "refused", code: "agent_pack_unreadable", message: messageOf(error) };
  }
  const hostStep = decideHostPack(config, { version: host.manifest.version, digest: host.digest });
  if (hostStep.kind === "incompatible") return refusedBy(run, hostStep);

  const row = await run.deps.db.heartbeatRun.findUniqueOrThrow({ where: { id: target.runId }, select: { runnerProfileJson: true } });
  const recorded = readPackVerification(row.runnerProfileJson);
  let step: PackStep = decideBeforeRead(recorded);
  let reads = recorded.reads;
  let placed: string | null = null;
  while (step.kind === "read") {
    const observation = await oneRead(run, target, host, placed, (directory) => (placed = directory));
    const verdict = classifyRead(observation.seen, observation.stdout === null ? null : parseVerifyReport(observation.stdout), { digest: host.digest, version: config.version });
    if (verdict.outcome === "stopped") return { kind: "stopped" };
    const record = await recordPackRead(run.deps.db, {
      runId: target.runId,
      controller: run.deps.controller,
      read: { leaseId: handle.leaseId, outcome: verdict.outcome, reason: verdict.reason, detail: verdict.detail },
    });
    if (!record) return { kind: "lost" };
    reads = record.reads;
    await run.event(verdict.outcome === "verified" ? "info" : "warn", `agent_pack.${verdict.outcome}`, readMessage(verdict.outcome, verdict.detail), {
      reason: verdict.reason,
      inconclusiveReads: record.inconclusive,
      runtime: host.manifest.runtime,
      version: config.version,
      digest: host.digest,
    });
    step = decideAfterRead({ inconclusive: record.inconclusive, malformed: false }, verdict);
  }
  if (step.kind === "incompatible") return refusedBy(run, step);
  if (step.kind === "hold") return { kind: "hold", pack: host, reads };
  return { kind: "verified", env: { [AGENT_PACK_DIR_VARIABLE]: placed ?? "" } };
}

function readMessage(outcome: "verified" | "inconclusive" | "incompatible", detail: string): string {
  if (outcome === "verified") return `The agent pack was verified in the sandbox. ${detail}`;
  if (outcome === "incompatible") return `The agent pack in the sandbox is not the one the agent needs. ${detail}`;
  return `A verification read of the agent pack ended without an answer. ${detail}`;
}

async function refusedBy(run: RunScope, step: Extract<PackStep, { kind: "incompatible" }>): Promise<PackVerification> {
  const code = INCOMPATIBLE_CODES[step.reason];
  const message = `The agent pack is incompatible (${step.reason}); no agent was started. ${step.detail}`;
  await run.event("error", "agent_pack.refused", message, { code, reason: step.reason });
  return { kind: "refused", code, message };
}

/**
 * One attempt: the placement (until one succeeded in this dispatch) and the read, both within the
 * transport timeout. Whatever the provider does, this settles by the timeout (plus a short grace
 * for the exec to come back after its abort).
 */
async function oneRead(
  run: RunScope,
  target: PackTarget,
  host: HostAgentPack,
  placed: string | null,
  onPlaced: (directory: string) => void,
): Promise<{ seen: ReadObservation; stdout: string | null }> {
  const timeoutMs = run.deps.packReadTimeoutMs ?? PACK_READ_TIMEOUT_MS;
  const transport = new AbortController();
  const signal = AbortSignal.any([transport.signal, target.signal]);
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"deadline">((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      transport.abort();
      // The provider gets a moment to answer its abort; past it the read is given up.
      setTimeout(() => resolve("deadline"), Math.min(5_000, timeoutMs)).unref();
    }, timeoutMs);
  });
  let stdout = "";
  const attempt = (async (): Promise<ReadObservation> => {
    let directory = placed;
    if (directory === null) {
      const placement = await (target.plugin.placeAgentPack as NonNullable<EnvironmentProvider["placeAgentPack"]>).call(target.plugin, target.handle, host.files);
      directory = placement.directory;
      onPlaced(directory);
    }
    const exec = await (target.plugin.exec as NonNullable<EnvironmentProvider["exec"]>).call(target.plugin, target.handle, {
      argv: verifyArgv(directory, host.manifest),
      env: {},
      timeoutMs,
      signal,
      onOutput: (stream, chunk) => {
        if (stream === "stdout" && stdout.length < MAX_REPORT_CHARS) stdout += chunk.slice(0, MAX_REPORT_CHARS - stdout.length);
      },
    });
    return { kind: "exec", exitCode: exec.exitCode, signal: exec.signal, timedOut: exec.timedOut, cancelled: exec.cancelled, stdout };
  })().catch((error: unknown): ReadObservation => ({ kind: "threw", message: messageOf(error) }));
  // A Stop ends the read at once, whether or not the provider answers its abort.
  let onStop: (() => void) | undefined;
  const stop = new Promise<"stopped">((resolve) => {
    onStop = () => resolve("stopped");
    if (target.signal.aborted) resolve("stopped");
    else target.signal.addEventListener("abort", onStop, { once: true });
  });
  try {
    const seen = await Promise.race([attempt, deadline, stop]);
    if (seen === "stopped") return { seen: { kind: "stopped" }, stdout: null };
    if (target.signal.aborted) return { seen: { kind: "stopped" }, stdout: null };
    // Our timeout aborted the exec: whatever it answered after that is the timeout's.
    if (seen === "deadline" || timedOut) return { seen: { kind: "transport_timeout" }, stdout: null };
    return { seen, stdout: seen.kind === "exec" ? seen.stdout : null };
  } finally {
    clearTimeout(timer);
    if (onStop) target.signal.removeEventListener("abort", onStop);
  }
}
