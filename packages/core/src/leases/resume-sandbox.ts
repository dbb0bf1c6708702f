// The verified resume of a retained sandbox (R-EX-3, R-DT-2), outside any transaction: provider
// I/O on the exact allocation recorded on the lease. Two callers: the operator's export-only retry
// (recovery/operator/retry-workspace-export.ts) and the coordinator's own retry on a provider whose
// stopped sandbox cannot be read (finalization/resume-for-export.ts); both record the stop-only
// intent first (R-EX-5). Here, below both floors (DESIGN.md section 9).
import { isDomainError, messageOf } from "../errors";
import { hasCapability } from "../providers/registry";
import { readWorkspaceSentinel, type WorkspaceSentinel } from "./lease-metadata";
import type { LeaseProviderRegistry, LeaseRow } from "./lease-types";
import { pluginForLease } from "./plugin-for-lease";
import { handleOf, identityOf, probeSandbox, type SandboxProbe } from "./sandbox-probe";

export type Lifecycle =
  | { kind: "verified"; inspection: SandboxProbe }
  | { kind: "failed"; code: string; status: 409 | 503; message: string };

/** Same document as the lease's sentinel, field for field (the nonce included). */
function sameSentinel(a: WorkspaceSentinel | null, b: unknown): boolean {
  if (!a || typeof b !== "object" || b === null) return false;
  const o = b as Record<string, unknown>;
  return (Object.keys(a) as (keyof WorkspaceSentinel)[]).every((key) => o[key] === a[key]) && Object.keys(o).length === Object.keys(a).length;
}

/**
 * R-EX-3, R-DT-2: the verified lifecycle of the recorded lease. The sentinel is compared while
 * the sandbox is still stopped (where the provider can read a stopped sandbox's files); the plugin's resume drains, verifies the identity and reopens
 * admission; the exact workspace is probed again afterwards.
 */
export async function resumeVerified(registry: LeaseProviderRegistry, lease: LeaseRow): Promise<Lifecycle> {
  const lookup = pluginForLease(registry, lease);
  const identity = identityOf(lease);
  if (lookup.kind !== "found" || !identity || !hasCapability(lookup.plugin, "resume") || !hasCapability(lookup.plugin, "inspect")) {
    return { kind: "failed", code: "provider_plugin_unavailable", status: 503, message: "The lease's plugin cannot resume its sandbox here." };
  }
  const plugin = lookup.plugin;
  const handle = handleOf(lease);
  const recorded = readWorkspaceSentinel(lease.metadata);
  const needsSentinel = lease.leasePolicy === "ephemeral";
  const readSentinel = async (when: "stopped" | "resumed"): Promise<Lifecycle | null> => {
    if (!needsSentinel) return null;
    if (!hasCapability(plugin, "workspaceSentinel")) return { kind: "failed", code: "provider_capability_missing", status: 409, message: "The plugin cannot read the sandbox's sentinel." };
    let inSandbox: unknown;
    try {
      inSandbox = await plugin.readWorkspaceSentinel(handle);
    } catch (error) {
      // R-DT-2: a provider that reads no file of a stopped sandbox (Daytona) is verified by the
      // read after the resume alone; that read is never skipped, and nothing is exported before it.
      if (when === "stopped" && isDomainError(error) && error.code === "provider_sandbox_not_running") return null;
      return { kind: "failed", code: "export_retry_probe_failed", status: 503, message: `The sandbox's sentinel could not be read: ${messageOf(error)}` };
    }
    if (!sameSentinel(recorded.kind === "present" ? recorded.value : null, inSandbox)) {
      return { kind: "failed", code: "export_retry_sentinel_mismatch", status: 409, message: "The sandbox does not hold the lease's acquisition-time sentinel: it is not the original allocation." };
    }
    return null;
  };

  const before = await readSentinel("stopped");
  if (before) return before;
  try {
    const resumed = await plugin.resume(handle, identity);
    if (resumed.providerLeaseId !== identity.providerLeaseId || resumed.fingerprint !== identity.fingerprint) {
      return { kind: "failed", code: "export_retry_sandbox_replaced", status: 409, message: "The resumed sandbox is not the one recorded on the lease." };
    }
  } catch (error) {
    const code = isDomainError(error) && error.code === "provider_identity_mismatch" ? "export_retry_sandbox_replaced" : "export_retry_resume_failed";
    return { kind: "failed", code, status: code === "export_retry_sandbox_replaced" ? 409 : 503, message: `The sandbox could not be resumed: ${messageOf(error)}` };
  }
  const inspection = await probeSandbox(plugin, lease);
  if (inspection.kind !== "inspected") {
    return { kind: "failed", code: "export_retry_probe_failed", status: 503, message: inspection.kind === "probe_failed" ? `The resumed sandbox could not be inspected: ${inspection.message}` : "The resumed sandbox could not be inspected." };
  }
  const after = await readSentinel("resumed");
  if (after) return after;
  return { kind: "verified", inspection };
}
