// Timestamps for board users: a short relative phrase, with the exact UTC time on hover.
//
// A board page renders two of these per row, and Intl's format() was a visible share of a
// request's CPU. The words come from Intl still, but each distinct phrase and each
// distinct UTC day is formatted once and remembered: the phrases are at most 91 ("1 minute ago"
// to "6 days ago"), the days are bounded below. Only the clock digits are written by hand. These
// are pure functions of the date, so remembering them can never show anyone else's data.
const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const day = new Intl.DateTimeFormat("en-GB", {
  day: "numeric",
  month: "short",
  year: "numeric",
  timeZone: "UTC",
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Distinct UTC days remembered before the memo starts over (a long history page, a busy year). */
const MAX_DAYS = 2_000;

const phrases = new Map<number, string>();
const days = new Map<number, string>();

/** relative.format(-count, unit), remembered: unit 0 minutes, 1 hours, 2 days (count < 60). */
function ago(count: number, unit: 0 | 1 | 2): string {
  const key = unit * 100 + count;
  let phrase = phrases.get(key);
  if (phrase === undefined) {
    phrase = relative.format(-count, unit === 0 ? "minute" : unit === 1 ? "hour" : "day");
    phrases.set(key, phrase);
  }
  return phrase;
}

/** "1 Dec 2026": the UTC day of `date`, remembered per day. */
function dayOf(date: Date): string {
  const key = Math.floor(date.getTime() / DAY);
  let text = days.get(key);
  if (text === undefined) {
    if (days.size >= MAX_DAYS) days.clear();
    text = day.format(date);
    days.set(key, text);
  }
  return text;
}

const two = (n: number) => (n < 10 ? `0${n}` : String(n));

/** "just now", "12 minutes ago", "yesterday", then a date. Pure: `now` is passed in. */
export function formatRelative(date: Date, now: number): string {
  const elapsed = now - date.getTime();
  if (elapsed < 0) return formatExact(date);
  if (elapsed < MINUTE) return "just now";
  if (elapsed < HOUR) return ago(Math.floor(elapsed / MINUTE), 0);
  if (elapsed < DAY) return ago(Math.floor(elapsed / HOUR), 1);
  if (elapsed < 7 * DAY) return ago(Math.floor(elapsed / DAY), 2);
  return dayOf(date);
}

/** "1 Dec 2026, 16:30:43 UTC": en-GB's medium date and time in UTC. */
export function formatExact(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new RangeError("Invalid time value");
  return `${dayOf(date)}, ${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} UTC`;
}

/** "4 min 12 s", "2 h 3 min": how long a run took. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
