import { describe, expect, it } from "vitest";
import {
  harnessDatabaseCreatedAt,
  harnessDatabaseName,
  isAbandonedHarnessDatabase,
} from "./database-names";

describe("harness database names", () => {
  it("are unique, valid identifiers that record their creation time", () => {
    const now = Date.UTC(2026, 10, 30);
    const names = new Set(Array.from({ length: 200 }, () => harnessDatabaseName("test", now)));
    expect(names.size).toBe(200);
    for (const name of names) {
      expect(name).toMatch(/^[a-z0-9_]{1,63}$/);
      expect(harnessDatabaseCreatedAt(name)).toBe(now);
    }
  });

  it("counts as abandoned only harness databases older than the limit", () => {
    const day = 24 * 60 * 60 * 1000;
    const now = Date.UTC(2026, 10, 30);
    expect(
      isAbandonedHarnessDatabase(harnessDatabaseName("template", now - 2 * day), now, day),
    ).toBe(true);
    expect(isAbandonedHarnessDatabase(harnessDatabaseName("template", now - 1000), now, day)).toBe(
      false,
    );
    for (const other of [
      "copyback",
      "postgres",
      "copyback_e2e_1_2",
      "copyback_test_zz",
      "copyback_template_abc_123",
    ]) {
      expect(isAbandonedHarnessDatabase(other, now, day)).toBe(false);
    }
  });
});
