/**
 * The issues board's recovery chip. The recovery issues fill `recovery` (issues.list items) and
 * render a short status here ("Restoring saved work…", "Needs attention"); it is always null
 * now, so the chip renders nothing.
 */
export function RecoveryChip({ recovery }: { recovery: null }) {
  if (recovery === null) return null;
  return null;
}
