import { randomBytes, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  confirmedStopReceipt,
  DESTROY_INTENT_SCHEMA,
  judgeStopReceipt,
  newDestroyIntent,
  readDestroyIntent,
  readStopIntent,
  readStopReceipt,
  readWorkspaceSentinel,
  STOP_INTENT_SCHEMA,
  STOP_INTENT_SCHEMA_V1,
  STOP_RECEIPT_SCHEMA,
  stopMethodFor,
  verifyWorkspaceSentinel,
  WORKSPACE_SENTINEL_SCHEMA,
  type StopIntent,
} from "../../src/leases/index";
import type { StopReceipt } from "../../src/providers/types";

const leaseId = randomUUID();
const runId = randomUUID();
const companyId = randomUUID();
const lease = { leaseId, pluginId: "builtin.fake", providerLeaseId: "fake-1" };
/** The lease row an intent sits on (readStopIntent / readDestroyIntent compare the intent with it). */
const leaseRow = { id: leaseId, companyId, runId, pluginId: "builtin.fake", providerLeaseId: "fake-1" };

const sentinel = () => ({
  schema: WORKSPACE_SENTINEL_SCHEMA,
  runId,
  leaseId,
  providerLeaseId: "fake-1",
  allocationFingerprint: "fp-1",
  nonce: randomBytes(32).toString("hex"),
  createdAt: new Date().toISOString(),
});

const intent = (): StopIntent => ({
  schema: STOP_INTENT_SCHEMA,
  companyId,
  runId,
  leaseId,
  providerLeaseId: "fake-1",
  pluginId: "builtin.fake",
  requestId: randomUUID(),
  createdAt: new Date().toISOString(),
});

const receiptRecord = (requestId = randomUUID()) => ({
  schema: STOP_RECEIPT_SCHEMA,
  method: "builtin.stopLease",
  requestId,
  pluginId: "builtin.fake",
  providerLeaseId: "fake-1",
  stoppedAt: new Date().toISOString(),
});

describe("lease metadata", () => {
  it("R-DT-2 accepts the sentinel of this run and allocation only", () => {
    const metadata = { workspaceSentinel: sentinel() };
    const expected = { ...lease, runId, fingerprint: "fp-1" };
    expect(verifyWorkspaceSentinel(metadata, expected).kind).toBe("valid");
    expect(verifyWorkspaceSentinel(metadata, { ...expected, runId: randomUUID() }).kind).toBe("mismatch");
    expect(verifyWorkspaceSentinel(metadata, { ...expected, fingerprint: "fp-2" }).kind).toBe("mismatch");
    expect(verifyWorkspaceSentinel(metadata, { ...expected, providerLeaseId: "fake-2" }).kind).toBe("mismatch");
    expect(verifyWorkspaceSentinel({}, expected).kind).toBe("missing");
  });

  it("malformed metadata grants nothing: unknown versions, extra fields, wrong types and non-objects are invalid", () => {
    const expected = { ...lease, runId, fingerprint: "fp-1" };
    const bad: unknown[] = [
      { workspaceSentinel: { ...sentinel(), schema: "copyback.workspace-sentinel.v2" } },
      { workspaceSentinel: { ...sentinel(), extra: 1 } },
      { workspaceSentinel: { ...sentinel(), nonce: "short" } },
      { workspaceSentinel: "yes" },
      [],
      "metadata",
      null,
    ];
    for (const metadata of bad) {
      expect(readWorkspaceSentinel(metadata).kind, JSON.stringify(metadata)).toBe("invalid");
      expect(verifyWorkspaceSentinel(metadata, expected).kind).toBe("invalid");
    }
    expect(readStopReceipt({ sandboxStopAndRetainReceipt: { ...receiptRecord(), method: "destroy" } }).kind).toBe("invalid");
    expect(confirmedStopReceipt({ sandboxStopAndRetainReceipt: { ...receiptRecord(), stoppedAt: "yesterday" } }, lease).kind).toBe("invalid");
  });

  it("a confirmed receipt counts only for the lease's own plugin and allocation, and not while an intent is pending", () => {
    expect(confirmedStopReceipt({ sandboxStopAndRetainReceipt: receiptRecord() }, lease).kind).toBe("confirmed");
    expect(confirmedStopReceipt({ sandboxStopAndRetainReceipt: receiptRecord() }, { ...lease, pluginId: "other.fake" }).kind).toBe("mismatch");
    expect(confirmedStopReceipt({ sandboxStopAndRetainReceipt: receiptRecord() }, { ...lease, providerLeaseId: "fake-2" }).kind).toBe("mismatch");
    expect(confirmedStopReceipt({ sandboxStopAndRetainReceipt: receiptRecord(), sandboxStopAndRetain: intent() }, lease).kind).toBe("mismatch");
    expect(confirmedStopReceipt({}, lease).kind).toBe("missing");
  });

  it("R-EX-7 reads a v1 intent with the lease's plugin and rejects a v2 intent pinned to another plugin", () => {
    const { pluginId: _pin, ...v1 } = { ...intent(), schema: STOP_INTENT_SCHEMA_V1 };
    const read = readStopIntent({ sandboxStopAndRetain: v1 }, leaseRow);
    expect(read).toMatchObject({ kind: "present", value: { pluginId: "builtin.fake", schema: STOP_INTENT_SCHEMA } });
    expect(readStopIntent({ sandboxStopAndRetain: { ...intent(), pluginId: "other.fake" } }, leaseRow).kind).toBe("invalid");
    expect(readStopIntent({ sandboxStopAndRetain: intent() }, leaseRow).kind).toBe("present");
    // A v1 intent is recovered with the lease's plugin, whatever plugin the lease names.
    expect(readStopIntent({ sandboxStopAndRetain: v1 }, { ...leaseRow, pluginId: "vendor.stopper" })).toMatchObject({ kind: "present", value: { pluginId: "vendor.stopper" } });
  });

  it("R-EX-5 an intent counts only on the lease row it names: its lease, company, run and provider allocation (v1 and v2)", () => {
    const { pluginId: _pin, ...v1 } = { ...intent(), schema: STOP_INTENT_SCHEMA_V1 };
    for (const document of [intent(), v1]) {
      expect(readStopIntent({ sandboxStopAndRetain: document }, leaseRow).kind).toBe("present");
      for (const changed of [{ id: randomUUID() }, { companyId: randomUUID() }, { runId: randomUUID() }, { runId: null }, { providerLeaseId: "fake-2" }, { providerLeaseId: null }]) {
        const read = readStopIntent({ sandboxStopAndRetain: document }, { ...leaseRow, ...changed });
        expect(read.kind, JSON.stringify(changed)).toBe("invalid");
      }
    }
  });

  it("R-SO-3 a stored receipt says builtin.stopLease only for the built-in fake; any other plugin's must say environmentStopLease", () => {
    const other = { ...lease, pluginId: "vendor.stopper" };
    const record = (method: string) => ({ ...receiptRecord(), method, pluginId: other.pluginId });
    expect(confirmedStopReceipt({ sandboxStopAndRetainReceipt: record("environmentStopLease") }, other).kind).toBe("confirmed");
    expect(confirmedStopReceipt({ sandboxStopAndRetainReceipt: record("builtin.stopLease") }, other).kind).toBe("mismatch");
    expect(confirmedStopReceipt({ sandboxStopAndRetainReceipt: { ...receiptRecord(), method: "environmentStopLease" } }, lease).kind).toBe("mismatch");
    expect(stopMethodFor("builtin.fake")).toBe("builtin.stopLease");
    expect(stopMethodFor("builtin.local")).toBe("environmentStopLease");
  });
});

describe("judgeStopReceipt", () => {
  const receiptFor = (i: StopIntent, patch: Partial<StopReceipt> = {}): StopReceipt => ({
    method: "builtin.stopLease",
    requestId: i.requestId,
    pluginId: i.pluginId,
    providerLeaseId: i.providerLeaseId,
    confirmed: true,
    stoppedAt: new Date().toISOString(),
    ...patch,
  });

  it("R-SO-2 accepts a confirmed receipt of the same request, plugin and allocation", () => {
    const i = intent();
    const verdict = judgeStopReceipt(receiptFor(i), i);
    expect(verdict).toMatchObject({ kind: "confirmed", receipt: { schema: STOP_RECEIPT_SCHEMA, requestId: i.requestId, method: "builtin.stopLease" } });
  });

  it("R-SO-3 an unconfirmed receipt stays pending", () => {
    const i = intent();
    expect(judgeStopReceipt(receiptFor(i, { confirmed: false }), i)).toMatchObject({ kind: "rejected", code: "stop_unconfirmed" });
  });

  it("a receipt for another request, plugin or allocation, or with a bad timestamp, is a mismatch", () => {
    const i = intent();
    for (const patch of [{ requestId: randomUUID() }, { pluginId: "other.fake" }, { providerLeaseId: "fake-9" }, { stoppedAt: "soon" }]) {
      expect(judgeStopReceipt(receiptFor(i, patch), i)).toMatchObject({ kind: "rejected", code: "stop_receipt_mismatch" });
    }
  });

  it("R-SO-3 only the built-in fake may answer builtin.stopLease; another plugin's receipt must say environmentStopLease", () => {
    const fake = intent();
    expect(judgeStopReceipt(receiptFor(fake, { method: "environmentStopLease" }), fake)).toMatchObject({ kind: "rejected", code: "stop_receipt_mismatch" });
    const vendor = { ...intent(), pluginId: "vendor.stopper" };
    expect(judgeStopReceipt(receiptFor(vendor), vendor)).toMatchObject({ kind: "rejected", code: "stop_receipt_mismatch" });
    expect(judgeStopReceipt(receiptFor(vendor, { method: "environmentStopLease" }), vendor)).toMatchObject({ kind: "confirmed", receipt: { method: "environmentStopLease" } });
  });
});

describe("destroy intent", () => {
  const unnamed = { id: leaseId, companyId: randomUUID(), runId, pluginId: "builtin.fake", providerLeaseId: null };
  const row = { ...unnamed, providerLeaseId: "fake-1" };

  it("names the lease, its run and plugin, and the allocation when known (null after a lost acquire reply)", () => {
    const lost = newDestroyIntent(unnamed, { providerLeaseId: null, reason: "acquire_unconfirmed" });
    expect(lost).toMatchObject({ schema: DESTROY_INTENT_SCHEMA, leaseId, runId, pluginId: "builtin.fake", providerLeaseId: null, reason: "acquire_unconfirmed" });
    expect(readDestroyIntent({ sandboxDestroy: lost }, unnamed)).toEqual({ kind: "present", value: lost });
    // An intent whose allocation differs from the row's (named since, or another one) grants nothing.
    expect(readDestroyIntent({ sandboxDestroy: lost }, row).kind).toBe("invalid");
    const known = newDestroyIntent(row, { providerLeaseId: "fake-1", reason: "release" });
    expect(readDestroyIntent({ sandboxDestroy: known }, row)).toMatchObject({ kind: "present", value: { providerLeaseId: "fake-1" } });
    expect(readDestroyIntent({ sandboxDestroy: known }, { ...row, runId: randomUUID() }).kind).toBe("invalid");
    expect(readDestroyIntent({}, row)).toEqual({ kind: "absent" });
    expect(readDestroyIntent({ sandboxDestroy: null }, row)).toEqual({ kind: "absent" });
  });

  it("malformed or foreign destroy intents grant nothing: another plugin, another lease, unknown versions, extra fields", () => {
    const good = newDestroyIntent(row, { providerLeaseId: "fake-1", reason: "release" });
    for (const bad of [
      { ...good, pluginId: "other.plugin" },
      { ...good, leaseId: randomUUID() },
      { ...good, schema: "copyback.sandbox-destroy.v9" },
      { ...good, extra: true },
      { ...good, reason: "because" },
      { ...good, providerLeaseId: "" },
      "destroy",
    ]) {
      expect(readDestroyIntent({ sandboxDestroy: bad }, row).kind).toBe("invalid");
    }
    expect(readDestroyIntent([], row).kind).toBe("invalid");
  });
});
