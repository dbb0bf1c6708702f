// judgeAutoDeleteReadback (R-DT-1), pure: only a read-back record that says "disabled" confirms.
import { describe, expect, it } from "vitest";
import { judgeAutoDeleteReadback } from "./auto-delete-preservation";

describe("judgeAutoDeleteReadback", () => {
  it("R-DT-1 confirms only a record that says auto-delete is disabled", () => {
    expect(judgeAutoDeleteReadback({ autoDelete: "disabled" })).toEqual({ kind: "confirmed" });
  });

  it("R-DT-1 an enabled, unknown or missing record is unconfirmed (the stop waits)", () => {
    for (const policy of [{ autoDelete: "enabled" as const }, { autoDelete: "unknown" as const }, null, undefined]) {
      const verdict = judgeAutoDeleteReadback(policy);
      expect(verdict).toMatchObject({ kind: "unconfirmed", code: "auto_delete_unconfirmed" });
    }
    expect(judgeAutoDeleteReadback({ autoDelete: "enabled" })).toMatchObject({ message: expect.stringContaining("says enabled") });
  });
});
