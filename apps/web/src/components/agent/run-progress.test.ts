import { describe, expect, it } from "vitest";
import { RUN_PROGRESS, runProgressOf } from "./run-progress";

describe("runProgressOf", () => {
  it("R-UI-2: a running run held for an operator is not shown as working", () => {
    expect(runProgressOf("running", "attention")).toMatchObject({ label: "Waiting for an operator", settled: true });
  });
  it("R-UI-1: a queued restore shows as restoring", () => {
    expect(runProgressOf("running", "restoring").label).toBe("Restoring saved work");
  });
  it("without a hold, and for settled runs, the plain status", () => {
    expect(runProgressOf("running", "none")).toBe(RUN_PROGRESS.running);
    expect(runProgressOf("succeeded", "attention")).toBe(RUN_PROGRESS.succeeded);
  });
});
