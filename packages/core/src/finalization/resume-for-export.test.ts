// R-EX-1 (issue 21 defect B): which attempts resume their sandbox before exporting: only one an
// earlier failure stopped and retained (released), on a plugin that cannot export a stopped
// sandbox. Local and the fake read theirs as they are; Daytona advertises no exportWhileStopped.
import { describe, expect, it } from "vitest";
import { createDaytonaProvider } from "../providers/daytona/daytona-provider";
import { createFakeProvider } from "../providers/fake/fake-provider";
import { createLocalProvider } from "../providers/local/local-provider";
import { needsResume } from "./resume-for-export";

const daytona = createDaytonaProvider({ instanceRoot: "/nonexistent/copyback" });
const stoppedLease = { status: "released" as const, providerLeaseId: "p-1" };

describe("needsResume", () => {
  it("R-EX-1 a released (stopped and retained) Daytona sandbox is resumed before a later attempt exports", () => {
    expect(daytona.capabilities.has("exportWhileStopped")).toBe(false);
    expect(needsResume(stoppedLease, daytona)).toBe(true);
  });

  it("R-EX-1 a running sandbox, a stop in flight or a retry's resume (pending_cleanup), or no allocation: nothing to resume", () => {
    expect(needsResume({ status: "active", providerLeaseId: "p-1" }, daytona)).toBe(false);
    expect(needsResume({ status: "pending_cleanup", providerLeaseId: "p-1" }, daytona)).toBe(false);
    expect(needsResume({ status: "released", providerLeaseId: null }, daytona)).toBe(false);
  });

  it("R-EX-1 the local and fake providers export a stopped sandbox as it is: never resumed", () => {
    const local = createLocalProvider({ instanceRoot: "/nonexistent/copyback" });
    expect(local.capabilities.has("exportWhileStopped")).toBe(true);
    expect(needsResume(stoppedLease, local)).toBe(false);
    expect(needsResume(stoppedLease, createFakeProvider())).toBe(false);
  });
});
