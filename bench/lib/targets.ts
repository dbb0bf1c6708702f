// One line per target, for people and for `pnpm bench:all` (bench/all.ts), which collects the
// lines that start with TARGET_PREFIX from each benchmark's output into one summary table.
// Format: `target | <benchmark> | <target> | <measured> | PASS|MISS`.
import os from "node:os";

export const TARGET_PREFIX = "target | ";

export function printTarget(
  benchmark: string,
  target: string,
  measured: string,
  pass: boolean,
): void {
  console.log(`${TARGET_PREFIX}${benchmark} | ${target} | ${measured} | ${pass ? "PASS" : "MISS"}`);
}

export interface TargetLine {
  benchmark: string;
  target: string;
  measured: string;
  verdict: string;
}

/** The target lines in a benchmark's output (anything else is ignored). */
export function parseTargets(output: string): TargetLine[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith(TARGET_PREFIX))
    .map((line) => {
      const [benchmark = "", target = "", measured = "", verdict = ""] = line
        .slice(TARGET_PREFIX.length)
        .split(" | ");
      return { benchmark, target, measured, verdict: verdict.trim() };
    });
}

/** The load average (1, 5, 15 min), one decimal each. */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
}
