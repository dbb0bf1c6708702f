// R-RC-1: the confirmed destruction receipt a Discard writes on the lease it destroyed
// (sandboxes/discard-sandbox.ts). Reconstruction is admitted only on this evidence, and only
// for the exact allocation: the receipt's plugin and provider allocation must be the lease's own,
// and the lease must be `destroyed`. The metadata column is JSON anybody with database access can
// write, so a malformed or foreign receipt is never a pass.
import { z } from "zod";
import { LEASE_METADATA_KEYS } from "./lease-metadata";

export const DESTRUCTION_RECEIPT_SCHEMA = "copyback.sandbox-destruction-receipt.v1";

export const destructionReceiptSchema = z.object({
  schema: z.literal(DESTRUCTION_RECEIPT_SCHEMA),
  confirmed: z.literal(true),
  requestId: z.string().min(1),
  pluginId: z.string().min(1),
  providerLeaseId: z.string().min(1),
  destroyedAt: z.iso.datetime({ offset: true }),
  by: z.object({ type: z.string(), id: z.string().nullable() }),
  reason: z.string(),
  actionIds: z.array(z.string()),
});
export type DestructionReceiptRecord = z.infer<typeof destructionReceiptSchema>;

export type DestructionVerdict =
  | { kind: "confirmed"; receipt: DestructionReceiptRecord }
  | { kind: "missing" }
  | { kind: "invalid"; message: string }
  | { kind: "mismatch"; message: string };

/** R-RC-1: whether this exact lease row holds a confirmed destruction receipt for its own allocation. */
export function confirmedDestruction(lease: { status: string; pluginId: string; providerLeaseId: string | null; metadata: unknown }): DestructionVerdict {
  const metadata = lease.metadata;
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return { kind: "invalid", message: "lease metadata is not a JSON object" };
  const raw = (metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.destructionReceipt];
  if (raw === undefined || raw === null) return { kind: "missing" };
  const parsed = destructionReceiptSchema.safeParse(raw);
  if (!parsed.success) return { kind: "invalid", message: `${LEASE_METADATA_KEYS.destructionReceipt}: ${z.prettifyError(parsed.error)}` };
  const receipt = parsed.data;
  if (lease.status !== "destroyed") return { kind: "mismatch", message: `the lease is ${lease.status}, not destroyed` };
  if (receipt.pluginId !== lease.pluginId) return { kind: "mismatch", message: "the receipt names another plugin" };
  if (lease.providerLeaseId === null || receipt.providerLeaseId !== lease.providerLeaseId) return { kind: "mismatch", message: "the receipt names another allocation" };
  return { kind: "confirmed", receipt };
}
