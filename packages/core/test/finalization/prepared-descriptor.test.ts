import { describe, expect, it } from "vitest";
import { PREPARED_WORKSPACE_SCHEMA, preparedWorkspaceDescriptor } from "../../src/workspace/prepared-descriptor";

const valid = {
  schema: PREPARED_WORKSPACE_SCHEMA,
  executionWorkspaceId: "0b0b7c5e-3a8e-4f5d-9a53-8d3c1f0e2a11",
  hostPath: "/srv/ws",
  excludedPaths: ["node_modules"],
  baseline: {
    version: 1,
    entries: [
      { path: "src", type: "directory", mode: 0o755 },
      { path: "src/a.txt", type: "file", mode: 0o644, sha256: "a".repeat(64), size: 3 },
    ],
  },
  leaseId: "1c1c7c5e-3a8e-4f5d-9a53-8d3c1f0e2a12",
  seed: { providerLeaseId: "sbx-1", fingerprint: "fp" },
  preparedAt: "2026-11-30T12:00:00.000Z",
};

describe("preparedWorkspaceDescriptor", () => {
  it("parses a stored descriptor and its baseline manifest", () => {
    const parsed = preparedWorkspaceDescriptor.parse(valid);
    expect(parsed.baseline.entries.map((e) => e.path)).toEqual(["src", "src/a.txt"]);
  });

  it("refuses another schema version, a relative host path and a malformed baseline", () => {
    expect(preparedWorkspaceDescriptor.safeParse({ ...valid, schema: "copyback.prepared-workspace.v2" }).success).toBe(false);
    expect(preparedWorkspaceDescriptor.safeParse({ ...valid, hostPath: "srv/ws" }).success).toBe(false);
    // A file whose parent is not listed: the engine's parser refuses it (a merge trusts the baseline).
    const orphan = { version: 1, entries: [{ path: "x/a.txt", type: "file", mode: 0o644, sha256: "a".repeat(64) }] };
    expect(preparedWorkspaceDescriptor.safeParse({ ...valid, baseline: orphan }).success).toBe(false);
    expect(preparedWorkspaceDescriptor.safeParse({}).success).toBe(false);
  });
});
