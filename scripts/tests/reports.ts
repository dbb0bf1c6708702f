// Reads the JSON reports of every tier and sums them. Pure over the parsed reports.
import fs from "node:fs";
import path from "node:path";

export interface TierCounts {
  passed: number;
  failed: number;
  skipped: number;
  files: number;
}

export const emptyCounts = (): TierCounts => ({ passed: 0, failed: 0, skipped: 0, files: 0 });

/** vitest's json reporter (jest-compatible shape). */
export function countVitest(report: unknown): TierCounts {
  const r = report as { numPassedTests?: number; numFailedTests?: number; numPendingTests?: number; numTodoTests?: number; numTotalTestSuites?: number; testResults?: unknown[] };
  return {
    passed: r.numPassedTests ?? 0,
    failed: r.numFailedTests ?? 0,
    skipped: (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0),
    files: r.testResults?.length ?? 0,
  };
}

export interface SkippedTest {
  name: string;
  /** From the test's `meta.skipReason` when it set one before skipping itself. */
  reason: string | null;
}

/** The skipped tests of a vitest json report, with the reason a test gave (meta.skipReason). */
export function skippedVitest(report: unknown): SkippedTest[] {
  const files = (report as { testResults?: { assertionResults?: { fullName?: string; title?: string; status?: string; meta?: { skipReason?: unknown } }[] }[] } | null)?.testResults ?? [];
  return files.flatMap((file) =>
    (file.assertionResults ?? [])
      .filter((test) => test.status === "skipped" || test.status === "pending" || test.status === "todo")
      .map((test) => ({
        name: test.fullName ?? test.title ?? "?",
        reason: typeof test.meta?.skipReason === "string" ? test.meta.skipReason : null,
      })),
  );
}

/** Playwright's json reporter: expected = passed, unexpected = failed, flaky counted as failed. */
export function countPlaywright(report: unknown): TierCounts {
  const s = (report as { stats?: { expected?: number; unexpected?: number; flaky?: number; skipped?: number } }).stats ?? {};
  return { passed: s.expected ?? 0, failed: (s.unexpected ?? 0) + (s.flaky ?? 0), skipped: s.skipped ?? 0, files: 0 };
}

export function add(a: TierCounts, b: TierCounts): TierCounts {
  return { passed: a.passed + b.passed, failed: a.failed + b.failed, skipped: a.skipped + b.skipped, files: a.files + b.files };
}

export function readJson(file: string): unknown | null {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

export function workspaceReportFiles(root: string, name: string): string[] {
  const found: string[] = [];
  for (const group of ["apps", "packages"]) {
    const dir = path.join(root, group);
    if (!fs.existsSync(dir)) continue;
    for (const pkg of fs.readdirSync(dir)) {
      const file = path.join(dir, pkg, ".reports", name);
      if (fs.existsSync(file)) found.push(file);
    }
  }
  return found;
}
