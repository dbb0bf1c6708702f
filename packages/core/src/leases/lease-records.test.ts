import { describe, expect, it } from "vitest";
import { leaseRecords } from "./lease-records";
import { STOP_INTENT_SCHEMA, STOP_RECEIPT_SCHEMA } from "./lease-metadata";

const LEASE = { id: "11111111-1111-4111-8111-111111111111", companyId: "22222222-2222-4222-8222-222222222222", runId: "33333333-3333-4333-8333-333333333333", pluginId: "builtin.local", providerLeaseId: "alloc-1" };
const receipt = { schema: STOP_RECEIPT_SCHEMA, method: "environmentStopLease", requestId: "44444444-4444-4444-8444-444444444444", pluginId: "builtin.local", providerLeaseId: "alloc-1", stoppedAt: "2026-12-01T10:00:00.000Z" };
const intent = { schema: STOP_INTENT_SCHEMA, companyId: LEASE.companyId, runId: LEASE.runId, leaseId: LEASE.id, providerLeaseId: "alloc-1", pluginId: "builtin.local", requestId: "55555555-5555-4555-8555-555555555555", createdAt: "2026-12-01T09:59:00.000Z" };

describe("leaseRecords", () => {
  it("R-RR-4 shows a stopped lease's receipt as confirmed and its cleared intents as absent", () => {
    const records = leaseRecords({ ...LEASE, status: "released", metadata: { sandboxStopAndRetainReceipt: receipt, sandboxStopAndRetain: null } });
    expect(records.receipts.stopAndRetain).toEqual({ state: "present", value: receipt });
    expect(records.intents).toEqual({ stopAndRetain: { state: "absent" }, destroy: { state: "absent" } });
    expect(records.stopConfirmed).toBe(true);
  });

  it("R-RR-4 shows a pending stop intent; a receipt for another allocation or a malformed one proves no stop", () => {
    const pending = leaseRecords({ ...LEASE, status: "pending_cleanup", metadata: { sandboxStopAndRetain: intent } });
    expect(pending.intents.stopAndRetain).toEqual({ state: "present", value: intent });
    expect(pending.stopConfirmed).toBe(false);
    const other = leaseRecords({ ...LEASE, status: "released", metadata: { sandboxStopAndRetainReceipt: { ...receipt, providerLeaseId: "alloc-2" } } });
    expect(other.stopConfirmed).toBe(false);
    const malformed = leaseRecords({ ...LEASE, status: "released", metadata: { sandboxStopAndRetainReceipt: { method: "guess" } } });
    expect(malformed.receipts.stopAndRetain.state).toBe("invalid");
    expect(malformed.stopConfirmed).toBe(false);
    expect(leaseRecords({ ...LEASE, status: "released", metadata: "not an object" }).intents.stopAndRetain.state).toBe("invalid");
  });
});
