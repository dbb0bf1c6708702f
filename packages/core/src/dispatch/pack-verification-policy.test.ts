import { describe, expect, it } from "vitest";
import { parseVerifyReport, treeDigest } from "../providers/agent-pack/pack-format";
import {
  classifyRead,
  decideAfterRead,
  decideBeforeRead,
  decideHostPack,
  MAX_INCONCLUSIVE_READS,
  PACK_READ_TIMEOUT_MS,
  type ReadObservation,
} from "./pack-verification-policy";

const DIGEST = "a".repeat(64);
const expected = { digest: DIGEST, version: "1.4.2" };
const exec = (over: Partial<Extract<ReadObservation, { kind: "exec" }>> = {}): ReadObservation => ({ kind: "exec", exitCode: 0, signal: null, timedOut: false, cancelled: false, stdout: "", ...over });
const report = (digest = DIGEST, version = "1.4.2") => ({ digest, version });

describe("classifyRead", () => {
  it("R-PV-1 the budget is two inconclusive reads (one retry), each with a 30 s transport timeout", () => {
    expect(MAX_INCONCLUSIVE_READS).toBe(2);
    expect(PACK_READ_TIMEOUT_MS).toBe(30_000);
  });

  it.each([
    ["a transport timeout", { kind: "transport_timeout" } as ReadObservation, "timeout"],
    ["the provider's own timeout", exec({ exitCode: null, signal: "SIGKILL", timedOut: true }), "timeout"],
    ["a signal", exec({ exitCode: null, signal: "SIGTERM" }), "signal"],
    ["no exit status", exec({ exitCode: null }), "no_exit_status"],
    ["a transport exception", { kind: "threw", message: "ECONNRESET" } as ReadObservation, "transport_error"],
  ])("R-PV-1 %s is inconclusive (%s), never incompatible", (_name, observation, reason) => {
    expect(classifyRead(observation, report("b".repeat(64), "0.0.1"), expected)).toMatchObject({ outcome: "inconclusive", reason });
  });

  it("R-PV-1 a completed read without its report is inconclusive (a cut stream proves nothing)", () => {
    expect(classifyRead(exec(), null, expected)).toMatchObject({ outcome: "inconclusive", reason: "malformed_report" });
  });

  it("R-PV-1 a completed nonzero exit is incompatible, whatever it printed", () => {
    expect(classifyRead(exec({ exitCode: 5 }), report(), expected)).toMatchObject({ outcome: "incompatible", reason: "nonzero_exit", detail: expect.stringContaining("version command") });
    expect(classifyRead(exec({ exitCode: 1 }), null, expected)).toMatchObject({ outcome: "incompatible", reason: "nonzero_exit" });
  });

  it("R-PV-1 a digest mismatch and a wrong version are incompatible; both right is verified", () => {
    expect(classifyRead(exec(), report("b".repeat(64)), expected)).toMatchObject({ outcome: "incompatible", reason: "digest_mismatch" });
    expect(classifyRead(exec(), report(DIGEST, "1.4.3"), expected)).toMatchObject({ outcome: "incompatible", reason: "wrong_version" });
    expect(classifyRead(exec(), report(), expected)).toMatchObject({ outcome: "verified" });
  });

  it("R-PV-1 a Stop's cancellation is no verification outcome", () => {
    expect(classifyRead({ kind: "stopped" }, null, expected)).toEqual({ outcome: "stopped" });
    expect(classifyRead(exec({ cancelled: true, exitCode: null, signal: "SIGKILL" }), null, expected)).toEqual({ outcome: "stopped" });
  });
});

describe("the read budget", () => {
  const inconclusive = { outcome: "inconclusive" as const, reason: "timeout" as const, detail: "" };

  it("R-PV-1 the first inconclusive read is retried once; the second holds the run", () => {
    expect(decideBeforeRead({ inconclusive: 0, malformed: false })).toEqual({ kind: "read" });
    expect(decideAfterRead({ inconclusive: 1, malformed: false }, inconclusive)).toEqual({ kind: "read" });
    expect(decideAfterRead({ inconclusive: 2, malformed: false }, inconclusive)).toEqual({ kind: "hold" });
  });

  it("R-PV-1 a reattachment continues the run's budget: a spent one holds before any read, one spent read leaves exactly one", () => {
    expect(decideBeforeRead({ inconclusive: 2, malformed: false })).toEqual({ kind: "hold" });
    expect(decideBeforeRead({ inconclusive: 1, malformed: false })).toEqual({ kind: "read" });
    expect(decideAfterRead({ inconclusive: 2, malformed: false }, inconclusive)).toEqual({ kind: "hold" });
  });

  it("R-PV-1 an unreadable budget record grants nothing: the run is held without a read", () => {
    expect(decideBeforeRead({ inconclusive: 0, malformed: true })).toEqual({ kind: "hold" });
  });

  it("R-PV-1 an incompatible read ends the verification at once, even with budget left; a verified one authorizes the turn", () => {
    expect(decideAfterRead({ inconclusive: 0, malformed: false }, { outcome: "incompatible", reason: "digest_mismatch", detail: "d" })).toEqual({ kind: "incompatible", reason: "digest_mismatch", detail: "d" });
    expect(decideAfterRead({ inconclusive: 1, malformed: false }, { outcome: "verified", reason: "verified", detail: "" })).toEqual({ kind: "verified" });
  });
});

describe("the controller's own copy", () => {
  it("R-PV-1 a manifest of another version or a pinned digest the host copy lacks is incompatible before any read", () => {
    expect(decideHostPack({ version: "1.4.2" }, { version: "1.4.1", digest: DIGEST })).toMatchObject({ kind: "incompatible", reason: "wrong_version" });
    expect(decideHostPack({ version: "1.4.2", sha256: "c".repeat(64) }, { version: "1.4.2", digest: DIGEST })).toMatchObject({ kind: "incompatible", reason: "digest_mismatch" });
    expect(decideHostPack({ version: "1.4.2", sha256: DIGEST }, { version: "1.4.2", digest: DIGEST })).toEqual({ kind: "read" });
  });
});

describe("the pack format", () => {
  it("R-PV-1 the tree digest is the sha256 of sorted `<sha>  ./<path>` lines (bytewise order, not the given one)", () => {
    const a = { relativePath: "b/x", sha256: "1".repeat(64) };
    const b = { relativePath: "a", sha256: "2".repeat(64) };
    expect(treeDigest([a, b])).toBe(treeDigest([b, a]));
    expect(treeDigest([a, b])).not.toBe(treeDigest([a, { ...b, sha256: "3".repeat(64) }]));
    // `printf '%s  ./a\n%s  ./b/x\n' 2222... 1111... | sha256sum`, computed by coreutils.
    expect(treeDigest([a, b])).toBe("b047410e86ca1925db662d4e4e24bbd3297de367ddf0aee9fc6ce80e344eb1b0");
  });

  it("R-PV-1 the report is read only when both lines are there", () => {
    expect(parseVerifyReport(`copyback-pack-digest=${DIGEST}\ncopyback-pack-version=1.4.2\n`)).toEqual({ digest: DIGEST, version: "1.4.2" });
    expect(parseVerifyReport(`copyback-pack-digest=${DIGEST}\n`)).toBeNull();
    expect(parseVerifyReport("copyback-pack-digest=xyz\ncopyback-pack-version=1\n")).toBeNull();
  });
});
