import { describe, expect, it } from "vitest";
import { liveEventsUrl, parseLiveChange } from "./wire";

describe("live wire format", () => {
  it("parses a change and rejects malformed data", () => {
    const change = { entity: "heartbeat_runs", id: "r", issueId: "i", runId: "r", op: "UPDATE" };
    expect(parseLiveChange(JSON.stringify(change))).toEqual(change);
    for (const data of [
      "",
      "null",
      "[]",
      "{}",
      JSON.stringify({ ...change, op: "TRUNCATE" }),
      JSON.stringify({ ...change, issueId: 3 }),
    ]) {
      expect(parseLiveChange(data)).toBeNull();
    }
  });

  it("encodes the company id into the stream URL", () => {
    expect(liveEventsUrl("a b&c")).toBe("/api/events?companyId=a%20b%26c");
  });
});
