import { describe, expect, it } from "vitest";
import { decideUnboundClaim } from "./unbound-claim-policy";

describe("unbound workspace claim (issue 23: an unbound workspace is bound only where its directory is, or where it must be)", () => {
  it("host affinity: the directory here binds, whether or not another host is live", () => {
    expect(decideUnboundClaim({ directoryHere: true, otherLiveHosts: true })).toBe("bind");
    expect(decideUnboundClaim({ directoryHere: true, otherLiveHosts: false })).toBe("bind");
  });

  it("host affinity: the directory missing here leaves the run queued while another host is live, and binds when none is", () => {
    expect(decideUnboundClaim({ directoryHere: false, otherLiveHosts: true })).toBe("leave");
    expect(decideUnboundClaim({ directoryHere: false, otherLiveHosts: false })).toBe("bind");
  });
});
