import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import { isDatabaseFailure } from "./finalize-run";

describe("isDatabaseFailure", () => {
  it("a dropped database connection under the copyback is the database's failure, not the export's", () => {
    const dropped = Object.assign(new Error("Database error. Code: `57P01`."), { name: "PrismaClientKnownRequestError", code: "P2039" });
    expect(isDatabaseFailure(dropped)).toBe(true);
    expect(isDatabaseFailure(Object.assign(new Error("cannot reach"), { name: "PrismaClientInitializationError" }))).toBe(true);
  });
  it("copyback, provider and plain errors are not", () => {
    expect(isDatabaseFailure(new DomainError("unavailable", "provider_export_failed", "x"))).toBe(false);
    expect(isDatabaseFailure(Object.assign(new Error("x"), { code: "ENOSPC" }))).toBe(false);
    expect(isDatabaseFailure(null)).toBe(false);
  });
});
