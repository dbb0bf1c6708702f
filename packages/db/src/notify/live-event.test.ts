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

  it("R-RC-3 R-UI-3: reads an attachment's payload (migration issue_attachments_live_notify): its task, no run", () => {
    const attachment = { ...valid, entity: "issue_attachments", id: "6f1c2b1e-3b0e-4a8e-9d55-1f0f5bd1e0a7", op: "INSERT" };
    expect(parseLiveEvent(JSON.stringify(attachment))).toEqual(attachment);
    // Without its company it could be routed to no subscriber: skipped.
    expect(parseLiveEvent(JSON.stringify({ ...attachment, companyId: null }))).toBeNull();
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
