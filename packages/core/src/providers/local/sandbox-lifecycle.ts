// A local sandbox's lifecycle after acquisition: Stop (R-OWN-12: every recorded process group,
// found again from its record after a controller restart), the verified resume (R-EX-3), destroy,
// and inspection.
import { randomBytes } from "node:crypto";
import { readdir, rename, rmdir } from "node:fs/promises";
import { join } from "node:path";
import { emptyDirectory } from "../../copyback/archive/extract";
import { DomainError } from "../../errors";
import type { EnvironmentProvider, Inspection, LeaseHandle, SandboxIdentity, StopReceipt, StopRequest } from "../types";
import { fingerprintOf, type LocalSandboxes } from "./local-sandboxes";
import { terminateRecords } from "./process-group";
import { sandboxesDir, type SandboxLayout } from "./sandbox-layout";
import { readProcesses, readRecord, removeRecord, stoppedMarker, updateProcesses, writeRecord } from "./sandbox-records";

export type SandboxLifecycle = Required<Pick<EnvironmentProvider, "stopLease" | "resume" | "destroy" | "inspect">>;

async function removeTree(path: string): Promise<void> {
  await emptyDirectory(path);
  await rmdir(path);
}

export function sandboxLifecycle(sandboxes: LocalSandboxes, graceMs: number): SandboxLifecycle {
  /** Stops every recorded process group; true when none of them is known to run any more. */
  async function stopRecorded(layout: SandboxLayout): Promise<boolean> {
    const records = await readProcesses(layout.processesFile);
    const states = await terminateRecords(records, graceMs);
    const stopped = new Set(records.filter((_, i) => states[i] === "dead").map((r) => r.execId));
    if (stopped.size > 0) await updateProcesses(layout.processesFile, (list) => list.filter((r) => !stopped.has(r.execId)));
    return states.every((s) => s === "dead");
  }

  async function stopLease(lease: LeaseHandle, request: StopRequest): Promise<StopReceipt> {
    const { layout } = await sandboxes.open(lease);
    // The marker goes first: no new exec starts while the running ones are stopped.
    await writeRecord(layout.stoppedFile, { schema: "copyback.local-stopped.v1", requestId: request.requestId, stoppedAt: new Date().toISOString(), confirmed: false });
    const confirmed = await stopRecorded(layout);
    const stoppedAt = new Date().toISOString();
    await writeRecord(layout.stoppedFile, { schema: "copyback.local-stopped.v1", requestId: request.requestId, stoppedAt, confirmed });
    return { method: "environmentStopLease", requestId: request.requestId, pluginId: sandboxes.pluginId, providerLeaseId: lease.providerLeaseId, confirmed, stoppedAt };
  }

  /**
   * The verified lifecycle (R-EX-3): drain old activity (every recorded process group is stopped;
   * one that survives refuses the resume), verify the saved workspace identity, and only then
   * reopen admission (the stopped marker is what local-exec refuses to start under).
   */
  async function resume(lease: LeaseHandle, expected: SandboxIdentity): Promise<SandboxIdentity> {
    const { layout, record } = await sandboxes.open(lease);
    if (!(await stopRecorded(layout))) {
      throw new DomainError("unavailable", "provider_processes_alive", `Old processes of lease ${lease.leaseId} could not be stopped; the sandbox is not reopened.`);
    }
    const current = await fingerprintOf(layout, record);
    if (current.providerLeaseId !== expected.providerLeaseId || current.fingerprint !== expected.fingerprint) {
      throw new DomainError("conflict", "provider_identity_mismatch", `The sandbox of lease ${lease.leaseId} is not the one that was stopped.`, {
        expected: expected.fingerprint,
      });
    }
    await removeRecord(layout.stoppedFile);
    return current;
  }

  async function destroy(lease: LeaseHandle): Promise<void> {
    let opened;
    try {
      opened = await sandboxes.open(lease);
    } catch (error) {
      if (error instanceof DomainError && error.code === "provider_sandbox_missing") opened = null;
      else throw error;
    }
    const root = await sandboxes.instanceRoot();
    if (opened) {
      if (!(await stopRecorded(opened.layout))) {
        throw new DomainError("unavailable", "provider_processes_alive", `Processes of lease ${lease.leaseId} could not be stopped; the sandbox is kept.`);
      }
      // Renamed away first, so a crash while deleting leaves trash, not a half sandbox.
      await rename(opened.layout.root, join(sandboxesDir(root), `.trash-${lease.providerLeaseId}-${randomBytes(6).toString("hex")}`));
    }
    for (const name of await readdir(sandboxesDir(root))) {
      if (name.startsWith(`.trash-${lease.providerLeaseId}-`)) await removeTree(join(sandboxesDir(root), name));
    }
  }

  async function inspect(lease: LeaseHandle): Promise<Inspection> {
    let opened;
    try {
      opened = await sandboxes.open(lease);
    } catch (error) {
      if (error instanceof DomainError && error.code === "provider_sandbox_missing") return { state: "missing", identity: null, processes: [] };
      if (error instanceof DomainError && (error.code === "provider_sandbox_foreign" || error.code === "provider_sandbox_record_invalid")) {
        return { state: "unknown", identity: null, processes: [] };
      }
      throw error;
    }
    const { layout, record } = opened;
    const stopped = await readRecord(layout.stoppedFile, stoppedMarker);
    const records = await readProcesses(layout.processesFile);
    return {
      state: stopped ? "stopped" : "running",
      identity: await fingerprintOf(layout, record),
      processes: records.flatMap((r) => (r.namespaceInit ? [r.leader, r.namespaceInit] : [r.leader])),
    };
  }

  return { stopLease, resume, destroy, inspect };
}
