// Issue 21: the Environments page's live read of a Daytona environment's newest sandbox: the
// plugin pinned on the lease (R-EX-6) inspects it (Daytona: `daytona.get`), so the page shows the
// provider's own state name and the auto-delete policy as Daytona's record says it, not only
// copyback's. Bounded: a provider that does not answer in INSPECT_TIMEOUT_MS is "not read", never a
// page that hangs; any refusal (a missing or rejected key, a sandbox gone) is shown by its code.
import "server-only";
import { isDomainError } from "@copyback/core/errors";
import { hasCapability, type ProviderRegistry } from "@copyback/core/providers";

export const INSPECT_TIMEOUT_MS = 5_000;

export type SandboxReading =
  | { kind: "read"; state: string; providerState: string | null; autoDelete: string | null; autoDeleteMinutes: number | null }
  | { kind: "not_read"; code: string; message: string };

export async function inspectSandbox(
  registry: () => ProviderRegistry,
  lease: { id: string; pluginId: string; provider: string; providerLeaseId: string },
  timeoutMs = INSPECT_TIMEOUT_MS,
): Promise<SandboxReading> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const plugin = registry().forLease({ pluginId: lease.pluginId, provider: lease.provider });
    if (!hasCapability(plugin, "inspect")) return { kind: "not_read", code: "provider_capability_missing", message: `${lease.pluginId} cannot inspect sandboxes.` };
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`The provider did not answer within ${timeoutMs} ms.`), { code: "provider_inspect_timeout" })), timeoutMs);
    });
    const inspection = await Promise.race([plugin.inspect({ leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId }), timeout]);
    return {
      kind: "read",
      state: inspection.state,
      providerState: inspection.remote?.state ?? null,
      autoDelete: inspection.remote?.autoDelete ?? null,
      autoDeleteMinutes: inspection.remote?.autoDeleteMinutes ?? null,
    };
  } catch (error) {
    const code = isDomainError(error) ? error.code : ((error as { code?: unknown }).code as string | undefined) ?? "provider_inspect_failed";
    return { kind: "not_read", code: typeof code === "string" ? code : "provider_inspect_failed", message: error instanceof Error ? error.message : String(error) };
  } finally {
    if (timer) clearTimeout(timer);
  }
}
