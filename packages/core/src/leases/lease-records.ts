// R-RR-4: a lease's intents and receipts as GET /api/environment-leases/:leaseId shows them (pure).
// Each document of the lease's metadata is read with its own schema (lease-metadata.ts): a present
// one is shown parsed, an absent one as absent, and a malformed one as invalid with the reason,
// never as if it proved anything. `stopConfirmed` is the one check the cleanup and the repair
// services use (confirmedStopReceipt): the receipt matches the lease's plugin, allocation and method.
import {
  confirmedStopReceipt,
  readDestroyIntent,
  readLeaseFailure,
  readStopIntent,
  readStopReceipt,
  LEASE_METADATA_KEYS,
  type IntentBinding,
  type MetadataRead,
} from "./lease-metadata";

export type RecordView<T> = { state: "present"; value: T } | { state: "absent" } | { state: "invalid"; message: string };

function view<T>(read: MetadataRead<T>): RecordView<T> {
  if (read.kind === "present") return { state: "present", value: read.value };
  if (read.kind === "absent") return { state: "absent" };
  return { state: "invalid", message: read.message };
}

export function leaseRecords(lease: IntentBinding & { status: string; metadata: unknown }) {
  const metadata = lease.metadata;
  const reuseRefused = typeof metadata === "object" && metadata !== null && !Array.isArray(metadata) ? ((metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.reuseRefused] ?? null) : null;
  return {
    intents: {
      stopAndRetain: view(readStopIntent(metadata, lease)),
      destroy: view(readDestroyIntent(metadata, lease)),
    },
    receipts: {
      stopAndRetain: view(readStopReceipt(metadata)),
    },
    /** The lease is released with a stop receipt for its exact plugin and allocation. */
    stopConfirmed: lease.status === "released" && confirmedStopReceipt(metadata, { pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId }).kind === "confirmed",
    failure: view(readLeaseFailure(metadata)),
    reuseRefused,
  };
}
