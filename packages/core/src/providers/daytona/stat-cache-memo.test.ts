// The stat-cache memo (issue 24, bytes moved): a copy answers only for the exact digest it was
// written as, and the memo stays within its bound.
import { describe, expect, it } from "vitest";
import type { DaytonaStatCache } from "./delta-scan";
import { StatCacheMemo } from "./stat-cache-memo";

const cache = (n: number): DaytonaStatCache => ({ version: 1, files: { [`f${n}`]: [n, 0o644, "1", "1.0", "1.0", "a".repeat(64)] } });

describe("StatCacheMemo", () => {
  it("answers only for the digest the sandbox's copy was written as", () => {
    const memo = new StatCacheMemo();
    memo.set("sb-1", "d1", cache(1), 10);
    expect(memo.get("sb-1", "d1")).toEqual(cache(1));
    // The sandbox holds other bytes (another controller wrote it, or it was edited): no copy.
    expect(memo.get("sb-1", "d2")).toBeUndefined();
    expect(memo.get("sb-2", "d1")).toBeUndefined();
    memo.set("sb-1", "d2", cache(2), 10);
    expect(memo.get("sb-1", "d1")).toBeUndefined();
    expect(memo.get("sb-1", "d2")).toEqual(cache(2));
  });

  it("evicts the longest unused copy past its bound and never keeps one larger than the bound", () => {
    const memo = new StatCacheMemo(25);
    memo.set("a", "da", cache(1), 10);
    memo.set("b", "db", cache(2), 10);
    expect(memo.get("a", "da")).toBeDefined();
    memo.set("c", "dc", cache(3), 10);
    expect(memo.get("b", "db")).toBeUndefined();
    expect(memo.get("a", "da")).toBeDefined();
    expect(memo.get("c", "dc")).toBeDefined();
    memo.set("d", "dd", cache(4), 26);
    expect(memo.get("d", "dd")).toBeUndefined();
    expect(memo.size).toBe(2);
    memo.forget("a");
    expect(memo.size).toBe(1);
  });
});
