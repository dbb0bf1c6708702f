import { describe, expect, it } from "vitest";
import { compressResponses } from "../scripts/response-compression.mjs";

describe("compressResponses (next start's gzip)", () => {
  it("local mode answers loopback uncompressed", () => {
    expect(compressResponses({})).toBe(false);
    expect(compressResponses({ COPYBACK_DEPLOYMENT_MODE: "local" })).toBe(false);
  });

  it("authenticated mode compresses", () => {
    expect(compressResponses({ COPYBACK_DEPLOYMENT_MODE: "authenticated" })).toBe(true);
  });

  it("COPYBACK_WEB_COMPRESSION decides when set, in either mode", () => {
    expect(compressResponses({ COPYBACK_WEB_COMPRESSION: "on" })).toBe(true);
    expect(compressResponses({ COPYBACK_WEB_COMPRESSION: "off", COPYBACK_DEPLOYMENT_MODE: "authenticated" })).toBe(false);
    expect(compressResponses({ COPYBACK_WEB_COMPRESSION: " ", COPYBACK_DEPLOYMENT_MODE: "authenticated" })).toBe(true);
  });

  it("refuses any other value", () => {
    expect(() => compressResponses({ COPYBACK_WEB_COMPRESSION: "gzip" })).toThrow(/COPYBACK_WEB_COMPRESSION/);
  });
});
