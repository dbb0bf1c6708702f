import { Prisma } from "@copyback/db/client";
import { describe, expect, it } from "vitest";
import { codeOf, DomainError, isUniqueViolation, messageOf } from "./errors";

describe("codeOf and messageOf", () => {
  it("a domain error keeps its stable code; any other error takes the caller's fallback", () => {
    expect(codeOf(new DomainError("conflict", "provider_sandbox_busy", "busy"), "provider_seed_failed")).toBe("provider_sandbox_busy");
    expect(codeOf(Object.assign(new Error("disk full"), { code: "ENOSPC" }), "provider_seed_failed")).toBe("provider_seed_failed");
    expect(codeOf("thrown text", "provider_seed_failed")).toBe("provider_seed_failed");
  });
  it("an error's message, else the thrown value as a string", () => {
    expect(messageOf(new Error("disk full"))).toBe("disk full");
    expect(messageOf("thrown text")).toBe("thrown text");
    expect(messageOf(undefined)).toBe("undefined");
  });
});

describe("isUniqueViolation", () => {
  it("the database client's P2002 is a unique violation; its other errors and look-alikes are not", () => {
    const known = (code: string) => new Prisma.PrismaClientKnownRequestError("constraint", { code, clientVersion: "test" });
    expect(isUniqueViolation(known("P2002"))).toBe(true);
    expect(isUniqueViolation(known("P2025"))).toBe(false);
    expect(isUniqueViolation(Object.assign(new Error("dup"), { code: "P2002" }))).toBe(false);
    expect(isUniqueViolation(new DomainError("conflict", "P2002", "dup"))).toBe(false);
    expect(isUniqueViolation({ name: "PrismaClientKnownRequestError", code: "P2002" })).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
  });
});
