import { formatExact, formatRelative } from "./time";

/**
 * A <time> element with a relative label. Rendered on the server and, inside client components,
 * again in the browser a moment later: the label may differ by a minute, which is harmless.
 */
export function Timestamp({ date, className }: { date: Date; className?: string }) {
  return (
    <time
      dateTime={date.toISOString()}
      title={formatExact(date)}
      className={className}
      suppressHydrationWarning
    >
      {formatRelative(date, Date.now())}
    </time>
  );
}
