// The recorded size of a retained sandbox (lease-metadata.ts sandboxSizeSchema, readSandboxSize)
// and the listing's view of it (sandboxes/list-retained.ts retainedSandboxSize): parsed at the
// boundary, read only while it belongs to the lease's current stop receipt.
import { describe, expect, it } from "vitest";
import { retainedSandboxSize } from "./list-retained";
import { LEASE_METADATA_KEYS, readSandboxSize, SANDBOX_SIZE_SCHEMA, STOP_RECEIPT_SCHEMA } from "../leases/lease-metadata";

const REQUEST = "8c1f2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b";
const lease = { pluginId: "builtin.local", providerLeaseId: "local-abc" };
const receipt = { schema: STOP_RECEIPT_SCHEMA, method: "environmentStopLease", requestId: REQUEST, pluginId: "builtin.local", providerLeaseId: "local-abc", stoppedAt: "2026-12-01T10:00:00.000Z" };
const size = {
  schema: SANDBOX_SIZE_SCHEMA,
  pluginId: "builtin.local",
  providerLeaseId: "local-abc",
  stopRequestId: REQUEST,
  workspaceBytes: 1_020,
  workspaceEntries: 7,
  sandboxBytes: 1_300,
  sandboxEntries: 12,
  lowerBound: null,
  measuredAt: "2026-12-01T10:00:01.000Z",
  durationMs: 3,
};
const metadata = (extra: Record<string, unknown> = {}) => ({ [LEASE_METADATA_KEYS.stopReceipt]: receipt, [LEASE_METADATA_KEYS.sandboxSize]: size, ...extra });

describe("readSandboxSize", () => {
  it("reads the size of the lease's current stop", () => {
    expect(readSandboxSize(metadata(), lease)).toEqual({ kind: "present", value: size });
  });

  it("is absent without one, without a stop receipt, or for an earlier stop, another plugin or allocation", () => {
    expect(readSandboxSize({ [LEASE_METADATA_KEYS.stopReceipt]: receipt }, lease).kind).toBe("absent");
    expect(readSandboxSize(metadata({ [LEASE_METADATA_KEYS.sandboxSize]: null }), lease).kind).toBe("absent");
    expect(readSandboxSize({ [LEASE_METADATA_KEYS.sandboxSize]: size }, lease).kind).toBe("absent");
    expect(readSandboxSize(metadata({ [LEASE_METADATA_KEYS.stopReceipt]: { ...receipt, requestId: "9c1f2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b" } }), lease).kind).toBe("absent");
    expect(readSandboxSize(metadata(), { ...lease, pluginId: "builtin.fake" }).kind).toBe("absent");
    expect(readSandboxSize(metadata(), { ...lease, providerLeaseId: "local-other" }).kind).toBe("absent");
    expect(readSandboxSize(metadata({ [LEASE_METADATA_KEYS.sandboxSize]: { ...size, providerLeaseId: "local-other" } }), lease).kind).toBe("absent");
  });

  it("refuses a malformed document: negative or fractional counts, an unknown version or reason, extra keys", () => {
    for (const bad of [
      { ...size, workspaceBytes: -1 },
      { ...size, workspaceEntries: 1.5 },
      { ...size, schema: "copyback.sandbox-size.v2" },
      { ...size, lowerBound: "tired" },
      { ...size, extra: true },
      "12 MB",
    ]) {
      expect(readSandboxSize(metadata({ [LEASE_METADATA_KEYS.sandboxSize]: bad }), lease).kind).toBe("invalid");
    }
    expect(readSandboxSize([], lease).kind).toBe("invalid");
  });
});

describe("retainedSandboxSize", () => {
  it("gives the whole sandbox's bytes, the workspace's share and when it was measured", () => {
    expect(retainedSandboxSize(metadata(), lease)).toEqual({
      bytes: 1_300,
      entries: 12,
      workspaceBytes: 1_020,
      workspaceEntries: 7,
      lowerBound: null,
      measuredAt: new Date("2026-12-01T10:00:01.000Z"),
    });
  });

  it("falls back to the workspace where the provider did not count the whole sandbox, and keeps a lower bound's reason", () => {
    const partial = { ...size, sandboxBytes: null, sandboxEntries: null, lowerBound: "entry_budget" };
    expect(retainedSandboxSize(metadata({ [LEASE_METADATA_KEYS.sandboxSize]: partial }), lease)).toMatchObject({ bytes: 1_020, entries: 7, lowerBound: "entry_budget" });
  });

  it("is null (unknown) for anything readSandboxSize does not read as present", () => {
    expect(retainedSandboxSize({}, lease)).toBeNull();
    expect(retainedSandboxSize(metadata({ [LEASE_METADATA_KEYS.sandboxSize]: { ...size, workspaceBytes: "many" } }), lease)).toBeNull();
    expect(retainedSandboxSize(metadata(), { ...lease, providerLeaseId: null })).toBeNull();
  });
});
