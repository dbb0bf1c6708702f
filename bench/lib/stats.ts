// Small statistics and timing helpers for the benchmarks (figures only, no assertions).
import { performance } from "node:perf_hooks";

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile (p in 0..100) of the values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/**
 * Wall time and this process's CPU time (user + system, all threads: the libuv pool included).
 * On a busy machine wall time mostly measures the wait for a CPU; CPU time does not.
 */
export async function timed<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; ms: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await fn();
  const used = process.cpuUsage(cpu);
  return { value, ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return "-";
  if (value >= 1000) return `${(value / 1000).toFixed(2)} s`;
  if (value >= 10) return `${value.toFixed(0)} ms`;
  return `${value.toFixed(2)} ms`;
}

export function peakRssMiB(): number {
  // resourceUsage().maxRSS is in KiB (getrusage ru_maxrss on Linux).
  return process.resourceUsage().maxRSS / 1024;
}

/** Left-aligned text table. */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
