import { describe, expect, it } from "vitest";
import { formatExact, formatRelative } from "./time";

// What the formatters printed when each call went through Intl: the remembered phrases and days
// must read exactly the same.
const intlExact = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "medium", timeZone: "UTC" });
const intlRelative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const intlDay = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe("formatExact", () => {
  it("reads as Intl's en-GB medium date and time in UTC, every month, hour and second", () => {
    // A prime step walks through months, days, hours, minutes and seconds, leap day included.
    for (let t = Date.UTC(1999, 0, 1); t < Date.UTC(2031, 0, 1); t += 7_919_417_003) {
      const date = new Date(t);
      expect(formatExact(date)).toBe(`${intlExact.format(date)} UTC`);
    }
    for (const iso of ["2024-02-29T00:00:00Z", "2026-09-05T09:05:07Z", "2026-12-31T23:59:59.999Z", "1970-01-01T00:00:00Z"])
      expect(formatExact(new Date(iso))).toBe(`${intlExact.format(new Date(iso))} UTC`);
  });

  it("refuses an invalid date as Intl did", () => {
    expect(() => formatExact(new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe("formatRelative", () => {
  const now = Date.UTC(2026, 11, 1, 16, 30, 43, 473);
  const before = (ms: number) => new Date(now - ms);

  it("says just now under a minute, then minutes, hours and days as Intl words them", () => {
    expect(formatRelative(before(59_999), now)).toBe("just now");
    for (let m = 1; m < 60; m++) expect(formatRelative(before(m * MINUTE + 5_000), now)).toBe(intlRelative.format(-m, "minute"));
    for (let h = 1; h < 24; h++) expect(formatRelative(before(h * HOUR), now)).toBe(intlRelative.format(-h, "hour"));
    for (let d = 1; d < 7; d++) expect(formatRelative(before(d * DAY), now)).toBe(intlRelative.format(-d, "day"));
    expect(formatRelative(before(DAY), now)).toBe("yesterday");
  });

  it("gives the date from a week back, and the exact time for a date in the future", () => {
    for (let d = 7; d < 4_000; d += 37) expect(formatRelative(before(d * DAY), now)).toBe(intlDay.format(before(d * DAY)));
    expect(formatRelative(new Date(now + 1_000), now)).toBe(`${intlExact.format(new Date(now + 1_000))} UTC`);
  });
});
