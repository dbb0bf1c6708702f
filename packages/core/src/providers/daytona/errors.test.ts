// R-RR-1: a download whose connection broke after it was asked for is a dropped transfer; a
// Daytona that could not be reached at all, a timeout or an HTTP refusal keeps its own code.
import { describe, expect, it } from "vitest";
import { DomainError } from "../../errors";
import { droppedDownloadOf, providerErrorOf } from "./errors";

const context = { what: "downloading the archive", variable: "DAYTONA_API_KEY" };
const sdkError = (name: string, message: string) => Object.assign(new Error(message), { name });

describe("droppedDownloadOf", () => {
  it("R-RR-1 a connection reset or hung up after the request is transfer_dropped", () => {
    for (const message of ["socket hang up", "read ECONNRESET", "write EPIPE", "aborted", "Premature close"]) {
      const mapped = droppedDownloadOf(providerErrorOf(sdkError("DaytonaConnectionError", message), context), "export archive");
      expect(mapped).toMatchObject({ kind: "unavailable", code: "transfer_dropped" });
    }
  });

  it("R-RR-1 a connection never made, a timeout or an HTTP answer keeps its code", () => {
    expect(droppedDownloadOf(providerErrorOf(sdkError("DaytonaConnectionError", "connect ECONNREFUSED 127.0.0.1:9"), context), "x")).toMatchObject({ code: "provider_daytona_unreachable" });
    expect(droppedDownloadOf(providerErrorOf(sdkError("DaytonaConnectionError", "getaddrinfo ENOTFOUND daytona.invalid"), context), "x")).toMatchObject({ code: "provider_daytona_unreachable" });
    expect(droppedDownloadOf(providerErrorOf(sdkError("DaytonaConnectionTimeoutError", "HTTP request timed out; socket hang up"), context), "x")).toMatchObject({ code: "provider_daytona_unreachable" });
    expect(droppedDownloadOf(providerErrorOf(Object.assign(new Error("busy"), { statusCode: 503 }), context), "x")).toMatchObject({ code: "provider_daytona_unavailable" });
    const other = new DomainError("conflict", "provider_sandbox_missing", "gone");
    expect(droppedDownloadOf(other, "x")).toBe(other);
  });
});
