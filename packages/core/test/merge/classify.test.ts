import { describe, expect, it } from "vitest";
import {
  CopybackWriteError,
  MergeConflictError,
  classifyCopybackFailure,
} from "../../src/copyback/merge/index";

const coded = (code: string, extra: object = {}) => Object.assign(new Error(code), { code }, extra);

describe("classifyCopybackFailure (R-RR-1)", () => {
  const table: [string, unknown, { retryable: boolean; reason: string }][] = [
    [
      "a dropped transfer (ECONNRESET)",
      coded("ECONNRESET"),
      { retryable: true, reason: "transfer_dropped" },
    ],
    ["a broken pipe (EPIPE)", coded("EPIPE"), { retryable: true, reason: "transfer_dropped" }],
    [
      "a timed-out transfer (ETIMEDOUT)",
      coded("ETIMEDOUT"),
      { retryable: true, reason: "transfer_dropped" },
    ],
    [
      "a transfer_dropped code",
      coded("transfer_dropped"),
      { retryable: true, reason: "transfer_dropped" },
    ],
    [
      "a provider error",
      coded("provider_unavailable"),
      { retryable: true, reason: "provider_error" },
    ],
    [
      "a merge lock held by another restore",
      coded("directory_merge_lock_timeout"),
      { retryable: true, reason: "lock_timeout" },
    ],
    ["an unsafe archive", coded("unsafe_archive"), { retryable: false, reason: "unsafe_archive" }],
    ["EACCES", coded("EACCES"), { retryable: false, reason: "permission_denied" }],
    ["EPERM", coded("EPERM"), { retryable: false, reason: "permission_denied" }],
    ["EROFS", coded("EROFS"), { retryable: false, reason: "permission_denied" }],
    [
      "a merge conflict",
      new MergeConflictError([{ path: "a", kind: "both_changed", detail: "" }]),
      { retryable: false, reason: "merge_conflict" },
    ],
    [
      "a failure after host writes (CopybackWriteError)",
      new CopybackWriteError(coded("ECONNRESET"), "apply"),
      { retryable: false, reason: "after_host_writes" },
    ],
    [
      "any error marked hostWritesBegan",
      coded("provider_gone", { hostWritesBegan: true }),
      { retryable: false, reason: "after_host_writes" },
    ],
    [
      "a provider error wrapping an unsafe archive",
      Object.assign(coded("provider_export_failed"), { cause: coded("unsafe_archive") }),
      { retryable: false, reason: "unsafe_archive" },
    ],
    [
      "a plain error wrapping a dropped transfer",
      new Error("export failed", { cause: coded("ECONNRESET") }),
      { retryable: true, reason: "transfer_dropped" },
    ],
    ["an unknown error", new Error("something odd"), { retryable: false, reason: "unclassified" }],
    [
      "the staging directory full while the export is received (ENOSPC, before any host write)",
      Object.assign(new Error("archive extraction failed: could not write the extracted files"), { code: "archive_extraction_failed", errno: "ENOSPC" }),
      { retryable: true, reason: "staging_resources" },
    ],
    ["out of file descriptors (EMFILE)", coded("EMFILE"), { retryable: true, reason: "staging_resources" }],
    ["the merge lock's database on a full instance root (SQLITE_FULL)", coded("SQLITE_FULL"), { retryable: true, reason: "staging_resources" }],
    [
      "a full disk after host writes began stays final",
      Object.assign(new Error("w"), { hostWritesBegan: true, cause: coded("ENOSPC") }),
      { retryable: false, reason: "after_host_writes" },
    ],
    ["ENOENT", coded("ENOENT"), { retryable: false, reason: "unclassified" }],
    ["a non-error value", "boom", { retryable: false, reason: "unclassified" }],
    ["null", null, { retryable: false, reason: "unclassified" }],
  ];
  for (const [name, error, expected] of table) {
    it(`R-RR-1: ${name} -> ${expected.retryable ? "retry" : "final"} (${expected.reason})`, () => {
      expect(classifyCopybackFailure(error)).toEqual(expected);
    });
  }

  it("R-RR-1: a cyclic cause chain terminates", () => {
    const a = coded("provider_x") as Error & { cause?: unknown };
    const b = new Error("b", { cause: a });
    a.cause = b;
    expect(classifyCopybackFailure(a)).toEqual({ retryable: true, reason: "provider_error" });
  });
});
