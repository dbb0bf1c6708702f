import { describe, expect, it } from "vitest";
import { sseComment, sseEvent, sseRetry } from "./sse-format";

describe("server-sent event format", () => {
  it("writes an event as name, one data line per line, and a blank line", () => {
    expect(sseEvent("change", { id: "a" })).toBe('event: change\ndata: {"id":"a"}\n\n');
    expect(sseEvent("note", "two\nlines\r\nhere")).toBe(
      "event: note\ndata: two\ndata: lines\ndata: here\n\n",
    );
  });

  it("keeps comments and retry on their own lines, never injecting an event", () => {
    expect(sseComment("keep-alive")).toBe(": keep-alive\n\n");
    expect(sseComment("a\n\nevent: x")).toBe(": a event: x\n\n");
    expect(sseRetry(2500.7)).toBe("retry: 2500\n\n");
  });
});
