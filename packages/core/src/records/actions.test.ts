// R-OWN-5: one unverified-owner action per run and owner fingerprint; the evidence an action
// records is read back through one schema that refuses anything malformed.
import { describe, expect, it } from "vitest";
import {
  OWNER_ATTESTATION_SCHEMA,
  OWNER_UNVERIFIED_EVIDENCE_SCHEMA,
  ownerFingerprint,
  readOwnerUnverifiedEvidence,
  type OwnerUnverifiedEvidence,
} from "./actions";

const RUN = "3f2c1a4e-8b7d-4c6e-9f1a-2b3c4d5e6f70";
const OTHER_RUN = "7a9b0c1d-2e3f-4a5b-8c6d-7e8f9a0b1c2d";
const TOKEN = "c0ffee00-dead-4bee-8f00-0123456789ab";

function evidence(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema: OWNER_UNVERIFIED_EVIDENCE_SCHEMA,
    runId: RUN,
    ownerToken: TOKEN,
    owner: {
      host: "worker-a",
      pid: 4242,
      processStart: "918273",
      bootId: "0b6c6f0e-1c1a-4c55-9d43-7a1f6f0f0a01",
    },
    reason: "controller_exited_without_barrier",
    phase: "workspace_finalizing",
    resultId: "result-1",
    leaseIds: ["lease-1"],
    detectedAt: "2025-03-01T10:00:00.000Z",
    ...overrides,
  };
}

const ATTESTATION = {
  schema: OWNER_ATTESTATION_SCHEMA,
  ownerToken: TOKEN,
  owner: { host: "worker-a", pid: 4242 },
  stopEvidence: "railway: deployment d-1 REMOVED at 10:05",
  actor: { type: "user", id: "user-1" },
  attestedAt: "2025-03-01T10:06:00.000Z",
};

describe("ownerFingerprint", () => {
  it("R-OWN-5: the fingerprint is stable for the same run and token", () => {
    expect(ownerFingerprint(RUN, TOKEN)).toBe(ownerFingerprint(RUN, TOKEN));
    expect(ownerFingerprint(RUN, null)).toBe(ownerFingerprint(RUN, null));
  });

  it("R-OWN-5: the fingerprint is fixed across releases (a changed format would open a second action per receipt)", () => {
    expect(ownerFingerprint(RUN, TOKEN)).toMatch(new RegExp(`^${RUN}:owner:[0-9a-f]{32}$`));
    expect(ownerFingerprint(RUN, null)).toMatch(new RegExp(`^${RUN}:malformed:[0-9a-f]{32}$`));
  });

  it("R-OWN-5: another token of the same run is another fingerprint", () => {
    expect(ownerFingerprint(RUN, TOKEN)).not.toBe(ownerFingerprint(RUN, "tok-new"));
  });

  it("R-OWN-5: the same token on another run is another fingerprint", () => {
    expect(ownerFingerprint(RUN, TOKEN)).not.toBe(ownerFingerprint(OTHER_RUN, TOKEN));
    expect(ownerFingerprint(RUN, null)).not.toBe(ownerFingerprint(OTHER_RUN, null));
  });

  it("R-OWN-5: a malformed receipt is distinct from every token, also one spelled like its placeholder", () => {
    const malformed = ownerFingerprint(RUN, null);
    for (const token of ["", "malformed", "malformed-receipt", "null", TOKEN])
      expect(ownerFingerprint(RUN, token)).not.toBe(malformed);
  });

  it("R-OWN-5: many distinct tokens give distinct fingerprints", () => {
    const tokens = Array.from({ length: 500 }, (_, i) => `tok-${i}`);
    expect(new Set(tokens.map((t) => ownerFingerprint(RUN, t))).size).toBe(tokens.length);
  });

  it("R-OWN-5: the fingerprint never contains the token itself", () => {
    expect(ownerFingerprint(RUN, TOKEN)).not.toContain(TOKEN);
    expect(ownerFingerprint(RUN, "plain-token")).not.toContain("plain-token");
  });
});

describe("readOwnerUnverifiedEvidence", () => {
  it("R-OWN-5: reads back the evidence an unverified-owner action records", () => {
    const read = readOwnerUnverifiedEvidence(evidence());
    expect(read).toEqual<OwnerUnverifiedEvidence>(evidence() as OwnerUnverifiedEvidence);
  });

  it("R-OWN-5: reads the evidence of a malformed receipt (no token, no owner)", () => {
    expect(
      readOwnerUnverifiedEvidence(
        evidence({ ownerToken: null, owner: null, reason: "receipt_malformed" }),
      ),
    ).toMatchObject({ ownerToken: null, owner: null });
  });

  it("R-ATT-3: reads a recorded attestation", () => {
    expect(
      readOwnerUnverifiedEvidence(evidence({ attestation: ATTESTATION }))?.attestation,
    ).toEqual(ATTESTATION);
  });

  it("R-ATT-3: reads an attestation by an actor without id (the system or the local board)", () => {
    expect(
      readOwnerUnverifiedEvidence(
        evidence({ attestation: { ...ATTESTATION, actor: { type: "system", id: null } } }),
      )?.attestation?.actor,
    ).toEqual({ type: "system", id: null });
  });

  it.each<[string, unknown]>([
    ["null", null],
    ["undefined", undefined],
    ["a number", 42],
    ["an array", [evidence()]],
    ["the evidence as an unparsed JSON string", JSON.stringify(evidence())],
    ["truncated JSON text", JSON.stringify(evidence()).slice(0, 40)],
    ["an empty object", {}],
    ["another schema", evidence({ schema: "copyback.owner-unverified-evidence.v0" })],
    ["no schema", evidence({ schema: undefined })],
    ["a run id that is not a uuid", evidence({ runId: "run-1" })],
    ["no run id", evidence({ runId: undefined })],
    ["a numeric token", evidence({ ownerToken: 7 })],
    ["a missing token (must be null, not absent)", evidence({ ownerToken: undefined })],
    [
      "an owner without pid",
      evidence({ owner: { host: "worker-a", processStart: "1", bootId: "b" } }),
    ],
    [
      "an owner with a string pid",
      evidence({ owner: { host: "worker-a", pid: "4242", processStart: "1", bootId: "b" } }),
    ],
    ["no reason", evidence({ reason: undefined })],
    ["no phase", evidence({ phase: undefined })],
    ["lease ids that are not strings", evidence({ leaseIds: [1] })],
    ["lease ids that are not an array", evidence({ leaseIds: "lease-1" })],
    ["no detection time", evidence({ detectedAt: undefined })],
    [
      "an attestation of another schema",
      evidence({ attestation: { ...ATTESTATION, schema: "copyback.owner-stop-attestation.v0" } }),
    ],
    [
      "an attestation without token",
      evidence({ attestation: { ...ATTESTATION, ownerToken: undefined } }),
    ],
    [
      "an attestation without stop evidence",
      evidence({ attestation: { ...ATTESTATION, stopEvidence: undefined } }),
    ],
    [
      "an attestation without actor",
      evidence({ attestation: { ...ATTESTATION, actor: undefined } }),
    ],
    ["an attestation that is null", evidence({ attestation: null })],
  ])("R-OWN-5: refuses malformed evidence: %s", (_name, value) => {
    expect(readOwnerUnverifiedEvidence(value)).toBeNull();
  });

  it("R-OWN-5: JSON round trip of recorded evidence reads back equal", () => {
    const stored: unknown = JSON.parse(JSON.stringify(evidence({ attestation: ATTESTATION })));
    expect(readOwnerUnverifiedEvidence(stored)).toEqual(evidence({ attestation: ATTESTATION }));
  });
});
