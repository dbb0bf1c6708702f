import { describe, expect, it } from "vitest";
import { decideRunControls, RETRY_REFUSED_BY_HOLD } from "./run-controls";

describe("decideRunControls", () => {
  it("R-RC-7 offers Stop while the run is queued or working, to writers only", () => {
    expect(decideRunControls({ runStatus: "running", recovery: "none", canWrite: true }).stop).toBe(true);
    expect(decideRunControls({ runStatus: "queued", recovery: "none", canWrite: true }).stop).toBe(true);
    expect(decideRunControls({ runStatus: "running", recovery: "none", canWrite: false }).stop).toBe(false);
    for (const runStatus of ["succeeded", "failed", "cancelled", "timed_out"] as const) {
      expect(decideRunControls({ runStatus, recovery: "none", canWrite: true }).stop).toBe(false);
    }
    // A running run waiting for its copyback's recovery is not the agent's to stop.
    expect(decideRunControls({ runStatus: "running", recovery: "attention", canWrite: true }).stop).toBe(false);
  });

  it("R-RR-7 offers Retry after a failed, timed-out or stopped run, and says why not while a hold is open", () => {
    for (const runStatus of ["failed", "cancelled", "timed_out"] as const) {
      expect(decideRunControls({ runStatus, recovery: "none", canWrite: true }).retry).toEqual({ kind: "allowed" });
      expect(decideRunControls({ runStatus, recovery: "attention", canWrite: true }).retry).toEqual({ kind: "disabled", reason: RETRY_REFUSED_BY_HOLD });
      expect(decideRunControls({ runStatus, recovery: "restoring", canWrite: true }).retry.kind).toBe("disabled");
    }
    expect(decideRunControls({ runStatus: "succeeded", recovery: "none", canWrite: true }).retry).toEqual({ kind: "hidden" });
    expect(decideRunControls({ runStatus: "failed", recovery: "none", canWrite: false }).retry).toEqual({ kind: "hidden" });
    expect(RETRY_REFUSED_BY_HOLD).toMatch(/waits for recovery/);
  });
});
