import { describe, expect, it } from "vitest";
import { DeltaMismatchError } from "../copyback/delta/errors";
import { UnsafeArchiveError } from "../copyback/archive/errors";
import { ManifestError } from "../copyback/manifest/errors";
import { DomainError } from "../errors";
import { decideDeltaFailure, deltaCanSave } from "./delta-policy";
import { exportTimeoutError } from "./export-deadline";

describe("decideDeltaFailure", () => {
  it("R-RR-1 a delta the host's verification refuses falls back to the full export in the same try", () => {
    expect(decideDeltaFailure(new DeltaMismatchError("a.txt", "differs"))).toEqual({ kind: "fall_back", code: "provider_delta_mismatch" });
  });

  it("R-UA-2 an unsafe or malformed delta manifest falls back to the full export, whose own policy (salvage, omission) decides", () => {
    expect(decideDeltaFailure(new UnsafeArchiveError([]))).toEqual({ kind: "fall_back", code: "unsafe_archive" });
    expect(decideDeltaFailure(new ManifestError("invalid_manifest", "bad"))).toEqual({ kind: "fall_back", code: "invalid_manifest" });
    expect(decideDeltaFailure(new TypeError("a bug"))).toEqual({ kind: "fall_back", code: "delta_export_failed" });
  });

  it("R-RR-1 a provider, transfer or staging failure of the delta fails the try (retried as any export), no second export", () => {
    expect(decideDeltaFailure(new DomainError("unavailable", "provider_fault_injected", "x"))).toEqual({ kind: "fail_try" });
    expect(decideDeltaFailure(exportTimeoutError(10))).toEqual({ kind: "fail_try" });
    expect(decideDeltaFailure(Object.assign(new Error("reset"), { code: "ECONNRESET" }))).toEqual({ kind: "fail_try" });
    expect(decideDeltaFailure(Object.assign(new Error("full"), { code: "ENOSPC" }))).toEqual({ kind: "fail_try" });
  });

  it("never copies an unusual error code into the log", () => {
    expect(decideDeltaFailure(Object.assign(new Error("x"), { code: "has a /host/path in it" }))).toEqual({ kind: "fall_back", code: "delta_export_failed" });
  });
});

describe("deltaCanSave", () => {
  it("only a baseline with a file can leave anything out of the copyback", () => {
    expect(deltaCanSave({ version: 1, entries: [] })).toBe(false);
    expect(deltaCanSave({ version: 1, entries: [{ path: "d", type: "directory", mode: 0o755 }, { path: "l", type: "symlink", mode: 0o777, target: "d" }] })).toBe(false);
    expect(deltaCanSave({ version: 1, entries: [{ path: "f", type: "file", mode: 0o644, sha256: "0".repeat(64), size: 0 }] })).toBe(true);
  });
});
