// A local provider's sandboxes under its instance root. Files are never shared between leases:
// an existing directory is only ever taken back by the lease whose identity file it holds, so
// every call on a lease opens its sandbox here first, after checking that it is this plugin's
// and this lease's.
import { lstat, mkdir, realpath } from "node:fs/promises";
import { DomainError, errnoOf } from "../../errors";
import type { LeaseHandle, SandboxIdentity } from "../types";
import { checkLeaseId, providerLeaseIdOf, sandboxesDir, sandboxLayout, type SandboxLayout } from "./sandbox-layout";
import { readRecord, sandboxIdentityRecord, type SandboxIdentityRecord } from "./sandbox-records";

export const foreign = (what: string) =>
  new DomainError("conflict", "provider_sandbox_foreign", `The sandbox directory ${what} does not belong to this lease; it is left alone.`);
const missing = (leaseId: string) => new DomainError("not_found", "provider_sandbox_missing", `The sandbox of lease ${leaseId} does not exist.`);

export interface OpenedSandbox {
  layout: SandboxLayout;
  record: SandboxIdentityRecord;
  /** The real instance root. */
  root: string;
}

export interface LocalSandboxes {
  readonly pluginId: string;
  /** The real instance root, with its sandboxes directory (0700, a real directory). */
  instanceRoot(): Promise<string>;
  /** The sandbox of a lease handle, after checking that it is this plugin's and this lease's. */
  open(lease: LeaseHandle): Promise<OpenedSandbox>;
}

export function localSandboxes(instanceRootPath: string, pluginId: string): LocalSandboxes {
  let rootPromise: Promise<string> | undefined;

  function instanceRoot(): Promise<string> {
    rootPromise ??= (async () => {
      await mkdir(instanceRootPath, { recursive: true, mode: 0o700 });
      const root = await realpath(instanceRootPath);
      await mkdir(sandboxesDir(root), { mode: 0o700 }).catch((error) => {
        if (errnoOf(error) !== "EEXIST") throw error;
      });
      const stats = await lstat(sandboxesDir(root));
      if (!stats.isDirectory()) throw foreign(sandboxesDir(root));
      return root;
    })();
    rootPromise.catch(() => (rootPromise = undefined));
    return rootPromise;
  }

  async function open(lease: LeaseHandle): Promise<OpenedSandbox> {
    if (lease.pluginId !== pluginId) {
      throw new DomainError("conflict", "provider_plugin_mismatch", `Lease ${lease.leaseId} belongs to plugin ${lease.pluginId}, not ${pluginId}.`);
    }
    checkLeaseId(lease.leaseId);
    if (lease.providerLeaseId !== providerLeaseIdOf(lease.leaseId)) {
      throw new DomainError("conflict", "provider_identity_mismatch", `Lease ${lease.leaseId} does not name its own sandbox.`);
    }
    const root = await instanceRoot();
    const layout = sandboxLayout(root, lease.providerLeaseId);
    const stats = await lstat(layout.root).catch((error) => {
      if (errnoOf(error) === "ENOENT") return null;
      throw error;
    });
    if (!stats) throw missing(lease.leaseId);
    if (!stats.isDirectory()) throw foreign(layout.root);
    const record = await readRecord(layout.identityFile, sandboxIdentityRecord);
    if (!record || record.leaseId !== lease.leaseId || record.providerLeaseId !== lease.providerLeaseId || record.pluginId !== pluginId) {
      throw foreign(layout.root);
    }
    return { layout, record, root };
  }

  return { pluginId, instanceRoot, open };
}

export async function fingerprintOf(layout: SandboxLayout, record: SandboxIdentityRecord): Promise<SandboxIdentity> {
  // Device and inode name the directory; its birth time tells a directory deleted and made again
  // (which may get the same inode back at once) from the original; the nonce names the allocation.
  const stats = await lstat(layout.workspace, { bigint: true }).catch(() => null);
  const where = stats?.isDirectory() ? `${stats.dev}:${stats.ino}:${stats.birthtimeNs}` : "missing";
  return { providerLeaseId: record.providerLeaseId, fingerprint: `${where}:${record.nonce}` };
}

/** Refuses a sandbox whose workspace is no longer a real directory. */
export async function realWorkspace(layout: SandboxLayout): Promise<void> {
  const stats = await lstat(layout.workspace).catch(() => null);
  if (!stats?.isDirectory()) throw new DomainError("conflict", "provider_identity_mismatch", "The sandbox workspace is not a directory any more.");
}
