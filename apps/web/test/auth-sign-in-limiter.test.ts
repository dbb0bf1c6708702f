import { describe, expect, it } from "vitest";
import { SignInLimiter, clientIpOf } from "~/server/auth/sign-in-limiter";

function limiter(limits = { perIpAndEmail: 5, perEmail: 10, windowMs: 60_000 }) {
  let now = 1_000_000;
  const instance = new SignInLimiter(limits, () => now);
  return { instance, advance: (ms: number) => (now += ms) };
}

describe("SignInLimiter", () => {
  it("allows five attempts per address and email in a minute, then refuses with the wait", () => {
    const { instance, advance } = limiter();
    for (let i = 0; i < 5; i++) expect(instance.attempt("1.1.1.1", "ada@acme.test").allowed).toBe(true);
    advance(20_000);
    expect(instance.attempt("1.1.1.1", "ada@acme.test")).toEqual({ allowed: false, retryAfterSeconds: 40 });
    // Case and whitespace do not make another account.
    expect(instance.attempt("1.1.1.1", " ADA@acme.test ").allowed).toBe(false);
    // Another account from the same address, or the same account from another, is not affected yet.
    expect(instance.attempt("1.1.1.1", "grace@acme.test").allowed).toBe(true);
    expect(instance.attempt("2.2.2.2", "ada@acme.test").allowed).toBe(true);
    advance(40_000);
    expect(instance.attempt("1.1.1.1", "ada@acme.test").allowed).toBe(true);
  });

  it("caps one account across addresses", () => {
    const { instance } = limiter();
    for (let i = 0; i < 10; i++) expect(instance.attempt(`10.0.0.${i}`, "ada@acme.test").allowed).toBe(true);
    expect(instance.attempt("10.0.0.200", "ada@acme.test").allowed).toBe(false);
  });

  it("does not count refused attempts (waiting out the window is enough)", () => {
    const { instance, advance } = limiter({ perIpAndEmail: 1, perEmail: 10, windowMs: 1000 });
    expect(instance.attempt("ip", "a@x.test").allowed).toBe(true);
    for (let i = 0; i < 5; i++) expect(instance.attempt("ip", "a@x.test").allowed).toBe(false);
    advance(1000);
    expect(instance.attempt("ip", "a@x.test").allowed).toBe(true);
  });
});

describe("clientIpOf", () => {
  it("takes the first forwarded address", () => {
    expect(clientIpOf(new Headers({ "x-forwarded-for": "203.0.113.7, 10.0.0.1" }))).toBe("203.0.113.7");
    expect(clientIpOf(new Headers({ "x-real-ip": "203.0.113.8" }))).toBe("203.0.113.8");
    expect(clientIpOf(new Headers())).toBe("unknown");
  });
});
