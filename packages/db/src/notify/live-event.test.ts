import { describe, expect, it } from "vitest";
import { parseLiveEvent } from "./live-event";

const valid = {
  companyId: "0a0e0000-0000-4000-8000-00000000ac01",
  entity: "issues",
  id: "6f1c2b1e-3b0e-4a8e-9d55-1f0f5bd1e001",
  issueId: "6f1c2b1e-3b0e-4a8e-9d55-1f0f5bd1e001",
  runId: null,
  op: "UPDATE",
};

describe("parseLiveEvent", () => {
  it("reads the trigger's payload", () => {
    expect(parseLiveEvent(JSON.stringify(valid))).toEqual(valid);
  });

  it("skips anything else instead of throwing", () => {
    for (const payload of [
      undefined,
      "",
      "hello",
      "{}",
      "[]",
      JSON.stringify({ ...valid, entity: "companies" }),
      JSON.stringify({ ...valid, companyId: "x" }),
      JSON.stringify({ ...valid, op: "TRUNCATE" }),
    ]) {
      expect(parseLiveEvent(payload)).toBeNull();
    }
  });
});
