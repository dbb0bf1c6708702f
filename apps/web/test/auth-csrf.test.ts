import { describe, expect, it } from "vitest";
import type { Principal } from "@copyback/core/auth";
import { assertSameSiteMutation, isAmbientlyAuthenticated, isCrossSiteRequest } from "~/server/auth/csrf";
import { appOrigin } from "~/server/auth/app-origin";

const ORIGIN = "https://console.example";
const expected = () => ORIGIN;

describe("isCrossSiteRequest", () => {
  it("accepts same-origin fetches and requests without browser headers", () => {
    expect(isCrossSiteRequest(new Headers({ origin: ORIGIN, "sec-fetch-site": "same-origin" }), expected)).toBe(false);
    expect(isCrossSiteRequest(new Headers({ "sec-fetch-site": "none" }), expected)).toBe(false);
    expect(isCrossSiteRequest(new Headers(), expected)).toBe(false);
  });

  it("refuses cross-site and same-site fetch metadata, foreign and null origins", () => {
    expect(isCrossSiteRequest(new Headers({ "sec-fetch-site": "cross-site" }), expected)).toBe(true);
    expect(isCrossSiteRequest(new Headers({ "sec-fetch-site": "same-site", origin: "https://other.console.example" }), expected)).toBe(true);
    expect(isCrossSiteRequest(new Headers({ origin: "https://evil.example" }), expected)).toBe(true);
    expect(isCrossSiteRequest(new Headers({ origin: "null" }), expected)).toBe(true);
    // Same host, other scheme or port: another origin.
    expect(isCrossSiteRequest(new Headers({ origin: "http://console.example" }), expected)).toBe(true);
    expect(isCrossSiteRequest(new Headers({ origin: "https://console.example:8443" }), expected)).toBe(true);
    expect(isCrossSiteRequest(new Headers({ origin: ORIGIN }), () => null)).toBe(true);
  });

  it("reads the configuration only when an Origin needs comparing", () => {
    let asked = 0;
    isCrossSiteRequest(new Headers({ "sec-fetch-site": "same-origin" }), () => (asked++, ORIGIN));
    expect(asked).toBe(0);
  });
});

describe("assertSameSiteMutation", () => {
  const cross = new Headers({ origin: "https://evil.example", "sec-fetch-site": "cross-site" });
  const principals: Array<[Principal, boolean]> = [
    [{ kind: "local_board" }, true],
    [{ kind: "board_user", userId: "u", isInstanceAdmin: false, memberships: [], via: "session" }, true],
    [{ kind: "board_user", userId: "u", isInstanceAdmin: false, memberships: [], via: "board_api_key" }, false],
    [{ kind: "agent", agentId: "a", companyId: "c", keyId: "k" }, false],
    [{ kind: "anonymous" }, false],
  ];
  it.each(principals)("guards ambient credentials only (%o -> %s)", (principal, guarded) => {
    expect(isAmbientlyAuthenticated(principal)).toBe(guarded);
    const attempt = () => assertSameSiteMutation(principal, cross, expected);
    if (guarded) expect(attempt).toThrow(expect.objectContaining({ kind: "forbidden", code: "cross_site_request" }));
    else expect(attempt).not.toThrow();
  });
});

describe("appOrigin", () => {
  it("prefers the configured public URL, else the request's Host", () => {
    expect(appOrigin(new Headers({ host: "ignored:1" }), "https://console.example/base")).toBe(ORIGIN);
    expect(appOrigin(new Headers({ host: "127.0.0.1:3100" }), undefined)).toBe("http://127.0.0.1:3100");
    expect(appOrigin(new Headers({ host: "console.example", "x-forwarded-proto": "https" }), undefined)).toBe(ORIGIN);
    expect(appOrigin(new Headers(), undefined)).toBeNull();
  });
});
