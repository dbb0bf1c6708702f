// Parsing /proc/<pid>/stat (proc(5)). Field 2, comm, is the executable name in parentheses and
// may itself contain spaces and parentheses, so the fields after it are found after the LAST
// ")" in the line; splitting the whole line on spaces would shift every later field.

export interface ProcStat {
  /** Field 3: R, S, D, Z (zombie), T, t, X, I, ... */
  state: string;
  /** Field 5. */
  processGroup: number;
  /** Field 22: start time in clock ticks since boot, kept as a decimal string (may exceed 2^53). */
  startTime: string;
}

/** Pure: the text of /proc/<pid>/stat -> its state and start time, or null when malformed. */
export function parseProcStat(text: string): ProcStat | null {
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  // After ") ": field 3 is at index 0, so field N is at index N - 3.
  const fields = text.slice(close + 1).trim().split(/\s+/);
  const state = fields[0];
  const processGroup = fields[5 - 3];
  const startTime = fields[22 - 3];
  if (state === undefined || !/^[A-Za-z]$/.test(state)) return null;
  if (processGroup === undefined || !/^-?\d+$/.test(processGroup)) return null;
  if (startTime === undefined || !/^\d+$/.test(startTime)) return null;
  return { state, processGroup: Number(processGroup), startTime };
}
