// A Daytona sandbox's lifecycle after acquisition: the stop that keeps its files (R-DT-1,
// R-DT-4), resume, destroy, inspection and the auto-delete policy. Every verdict comes from a
// fresh read of Daytona's record (GET /sandbox/{id}), never from the answer of the call that
// asked for the change: a reply may be lost after the change happened, or claim what did not.
import { setTimeout as sleep } from "node:timers/promises";
import type { Sandbox } from "@daytonaio/sdk";
import { DomainError } from "../../errors";
import type { AutoDeletePolicy, Inspection, LeaseHandle, RemoteSandboxRecord, SandboxIdentity, SandboxState, StopReceipt, StopRequest } from "../types";
import type { DaytonaClient } from "./client";
import { fingerprintOf } from "./identity";
import type { DaytonaSandboxes } from "./sandboxes";

const POLL_MS = 100;

/** Daytona's record of auto-delete: a negative interval is disabled (Daytona stores -1). */
export function autoDeleteOf(sandbox: Pick<Sandbox, "autoDeleteInterval">): AutoDeletePolicy["autoDelete"] {
  const interval = sandbox.autoDeleteInterval;
  if (typeof interval !== "number") return "unknown";
  return interval < 0 ? "disabled" : "enabled";
}

/** Pure: Daytona's state as the provider contract's. An archive keeps the files (R-DT-4): stopped. */
export function contractStateOf(state: string | undefined): SandboxState {
  switch (state) {
    case "started":
    case "starting":
    case "creating":
    case "restoring":
      return "running";
    case "stopped":
    case "archived":
    case "archiving":
      return "stopped";
    case "destroyed":
    case "destroying":
      return "missing";
    default:
      return "unknown";
  }
}

export function remoteRecordOf(sandbox: Sandbox): RemoteSandboxRecord {
  const minutes = (value: number | undefined) => (typeof value === "number" && value >= 0 ? value : null);
  return {
    state: String(sandbox.state ?? "unknown"),
    autoDelete: autoDeleteOf(sandbox),
    autoDeleteMinutes: minutes(sandbox.autoDeleteInterval),
    autoArchiveMinutes: minutes(sandbox.autoArchiveInterval),
    autoStopMinutes: minutes(sandbox.autoStopInterval),
  };
}

/** Fresh reads until `done` holds or the time is up; the last read either way. */
async function readUntil(client: DaytonaClient, sandboxId: string, done: (s: Sandbox) => boolean, timeoutSec: number): Promise<Sandbox> {
  const until = Date.now() + timeoutSec * 1000;
  for (;;) {
    const sandbox = await client.sandbox(sandboxId);
    if (done(sandbox) || Date.now() >= until) return sandbox;
    await sleep(POLL_MS);
  }
}

const settledStop = (s: Sandbox) => s.state === "stopped" || s.state === "archived" || s.state === "error" || s.state === "started";

/** R-DT-1: auto-delete set disabled, then read back; anything but "disabled" refuses the stop. */
async function preserveFromAutoDelete(client: DaytonaClient, sandbox: Sandbox): Promise<void> {
  if (autoDeleteOf(sandbox) !== "disabled") {
    await client.call(`disabling auto-delete of ${sandbox.id}`, () => sandbox.setAutoDeleteInterval(-1), { sandboxId: sandbox.id });
  }
  const reread = await client.sandbox(sandbox.id);
  if (autoDeleteOf(reread) !== "disabled") {
    throw new DomainError(
      "unavailable",
      "provider_auto_delete_unconfirmed",
      `Daytona's record of sandbox ${sandbox.id} does not confirm auto-delete is disabled (it says ${autoDeleteOf(reread)}); it is not stopped until it does.`,
      { sandboxId: sandbox.id },
    );
  }
}

export function daytonaLifecycle(sandboxes: DaytonaSandboxes) {
  const timeoutSec = () => sandboxes.settings.lifecycleTimeoutSec;

  async function disableAutoDelete(lease: LeaseHandle): Promise<void> {
    const { client, sandbox } = await sandboxes.open(lease);
    await client.call(`disabling auto-delete of ${sandbox.id}`, () => sandbox.setAutoDeleteInterval(-1), { sandboxId: sandbox.id });
  }

  async function readAutoDeletePolicy(lease: LeaseHandle): Promise<AutoDeletePolicy> {
    const { sandbox } = await sandboxes.open(lease);
    return { autoDelete: autoDeleteOf(sandbox) };
  }

  /**
   * R-DT-1: never stops a sandbox Daytona could then delete: auto-delete is disabled and read back
   * first, and an unconfirmed policy is a typed refusal (the cleanup stays pending; nothing is
   * stopped or deleted instead). R-DT-4: a sandbox freshly read as `archived` (Daytona archived it
   * on its own) with auto-delete confirmed disabled is stopped with its files kept: confirmed.
   */
  async function stopLease(lease: LeaseHandle, request: StopRequest): Promise<StopReceipt> {
    const { client, sandbox } = await sandboxes.open(lease);
    await preserveFromAutoDelete(client, sandbox);
    let current = await client.sandbox(sandbox.id);
    if (current.state === "started") {
      try {
        await client.call(`stopping sandbox ${sandbox.id}`, () => current.stop(timeoutSec()), { sandboxId: sandbox.id });
      } catch {
        // A lost reply, a timeout or a refusal: what happened is read below, never assumed.
      }
    }
    current = await readUntil(client, sandbox.id, settledStop, current.state === "started" || current.state === "stopping" || current.state === "archiving" ? timeoutSec() : 0);
    const kept = (current.state === "stopped" || current.state === "archived") && autoDeleteOf(current) === "disabled";
    return {
      method: "environmentStopLease",
      requestId: request.requestId,
      pluginId: sandboxes.pluginId,
      providerLeaseId: lease.providerLeaseId,
      confirmed: kept,
      stoppedAt: new Date().toISOString(),
    };
  }

  /** Reopens a stopped or archived sandbox, only the one that was stopped (fingerprint). */
  async function resume(lease: LeaseHandle, expected: SandboxIdentity): Promise<SandboxIdentity> {
    const { client, sandbox } = await sandboxes.open(lease);
    const identity = { providerLeaseId: lease.providerLeaseId, fingerprint: fingerprintOf(sandbox) };
    if (expected.providerLeaseId !== lease.providerLeaseId || expected.fingerprint !== identity.fingerprint) {
      throw new DomainError("conflict", "provider_identity_mismatch", `The Daytona sandbox of lease ${lease.leaseId} is not the one that was stopped.`, { expected: expected.fingerprint });
    }
    let current = await readUntil(client, sandbox.id, (s) => s.state !== "stopping" && s.state !== "archiving" && s.state !== "starting", timeoutSec());
    if (current.state !== "started") {
      const target = current;
      try {
        await client.call(`starting sandbox ${sandbox.id}`, () => target.start(timeoutSec()), { sandboxId: sandbox.id });
      } catch {
        // Read below: a start whose reply was lost may still have happened.
      }
      current = await readUntil(client, sandbox.id, (s) => s.state === "started" || s.state === "error", timeoutSec());
    }
    if (current.state !== "started") {
      throw new DomainError("unavailable", "provider_resume_unconfirmed", `Daytona did not start sandbox ${sandbox.id} (it is ${String(current.state)}).`);
    }
    return identity;
  }

  /** Deletes the lease's own sandbox (a missing one is already gone) and waits until Daytona says so. */
  async function destroy(lease: LeaseHandle): Promise<void> {
    let opened;
    try {
      opened = await sandboxes.open(lease);
    } catch (error) {
      if (error instanceof DomainError && error.code === "provider_sandbox_missing") return;
      throw error;
    }
    const { client, sandbox } = opened;
    try {
      await client.call(`deleting sandbox ${sandbox.id}`, () => sandbox.delete(timeoutSec()), { sandboxId: sandbox.id });
    } catch (error) {
      if (!(error instanceof DomainError && error.code === "provider_sandbox_missing")) throw error;
    }
    const until = Date.now() + timeoutSec() * 1000;
    for (;;) {
      try {
        const current = await client.sandbox(sandbox.id);
        if (current.state === "destroyed") return;
      } catch (error) {
        if (error instanceof DomainError && error.code === "provider_sandbox_missing") return;
        throw error;
      }
      if (Date.now() >= until) throw new DomainError("unavailable", "provider_destroy_unconfirmed", `Daytona has not confirmed that sandbox ${sandbox.id} is deleted.`);
      await sleep(POLL_MS);
    }
  }

  async function inspect(lease: LeaseHandle): Promise<Inspection> {
    let opened;
    try {
      opened = await sandboxes.open(lease);
    } catch (error) {
      if (error instanceof DomainError && error.code === "provider_sandbox_missing") return { state: "missing", identity: null, processes: [] };
      if (error instanceof DomainError && error.code === "provider_sandbox_foreign") return { state: "unknown", identity: null, processes: [] };
      throw error;
    }
    const { sandbox } = opened;
    return {
      state: contractStateOf(sandbox.state),
      identity: { providerLeaseId: lease.providerLeaseId, fingerprint: fingerprintOf(sandbox) },
      processes: [],
      remote: remoteRecordOf(sandbox),
    };
  }

  return { stopLease, resume, destroy, inspect, disableAutoDelete, readAutoDeletePolicy };
}
