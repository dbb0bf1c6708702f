// Pure helpers of the database gauges (database-gauges.ts), unit-tested beside.
export interface RunRow {
  status: string;
  phase: string;
  count: number | bigint;
}

export interface ActionRow {
  cause: string;
  ageSeconds: number;
}

export type AgeBucket = "lt_1h" | "1h_to_24h" | "ge_24h";

/** The age label of an open recovery action: bounded, so a dashboard can alert on ge_24h. */
export function ageBucket(seconds: number): AgeBucket {
  if (!(seconds >= 3600)) return "lt_1h";
  return seconds < 86_400 ? "1h_to_24h" : "ge_24h";
}

/** One sample per (status, phase); counts from the database may arrive as bigint. */
export function runGaugeSamples(rows: readonly RunRow[]): { labels: { status: string; phase: string }; value: number }[] {
  return rows.map((row) => ({ labels: { status: row.status, phase: row.phase }, value: Number(row.count) }));
}
