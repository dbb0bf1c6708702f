// Both directions of "the table covers the application": what exists without an entry (a new
// procedure or route someone forgot), and entries for what no longer exists (stale).
export interface CoverageGaps {
  missing: string[];
  stale: string[];
}

export function coverageGaps(
  enumerated: Iterable<string>,
  tableKeys: Iterable<string>,
): CoverageGaps {
  const present = new Set(enumerated);
  const listed = new Set(tableKeys);
  return {
    missing: [...present].filter((key) => !listed.has(key)).sort(),
    stale: [...listed].filter((key) => !present.has(key)).sort(),
  };
}
