import { describe, expect, it } from "vitest";
import { DomainError } from "./errors";
import { databaseFailureIn, isDatabaseFailure } from "./database-failure";

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
  it("a failure that wraps the database's (a preparation failure carrying the write that failed) names it; a provider's does not", () => {
    const dropped = Object.assign(new Error("terminating connection"), { name: "PrismaClientKnownRequestError", code: "P2010" });
    const wrapped = Object.assign(new DomainError("unavailable", "P2010", "Preparing the sandbox workspace failed"), { cause: dropped });
    expect(databaseFailureIn(dropped)).toBe(dropped);
    expect(databaseFailureIn(wrapped)).toBe(dropped);
    expect(databaseFailureIn(Object.assign(new DomainError("unavailable", "provider_seed_failed", "x"), { cause: Object.assign(new Error("disk full"), { code: "ENOSPC" }) }))).toBeNull();
    expect(databaseFailureIn(undefined)).toBeNull();
  });
});
