// Mutation testing of the pure decide-functions (issue 12 item 7): `pnpm mutation`.
// Not part of `npm test`. Runs only the unit tier (*.test.ts, no database) through
// stryker.vitest.config.mjs, type-checks every mutant (stryker.tsconfig.json), and writes
// .reports/mutation/index.html and mutation.json (gitignored). The clear-text reporter prints
// the score per file and every surviving mutant.
import { readFileSync } from "node:fs";

/**
 * binding.ts holds the pure checkRunBinding and the I/O loadRunBinding: mutate only the lines
 * from the first one's declaration to just before the second one's, found anew on every run.
 */
function checkRunBindingLines() {
  const lines = readFileSync(
    new URL("./packages/core/src/recovery/binding.ts", import.meta.url),
    "utf8",
  ).split("\n");
  const start = lines.findIndex((l) => l.startsWith("export function checkRunBinding(")) + 1;
  const end = lines.findIndex((l) => l.startsWith("export async function loadRunBinding("));
  if (start < 1 || end <= start)
    throw new Error("stryker.config.mjs: checkRunBinding/loadRunBinding not found in binding.ts");
  return `${start}-${end}`;
}

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  packageManager: "pnpm",
  // pnpm keeps the plugins out of core's own node_modules, so name them by resolved URL.
  plugins: [
    import.meta.resolve("@stryker-mutator/vitest-runner"),
    import.meta.resolve("@stryker-mutator/typescript-checker"),
  ],
  testRunner: "vitest",
  vitest: { configFile: "stryker.vitest.config.mjs", related: true },
  checkers: ["typescript"],
  // Only the mutated files and their imports (keep its list in step with `mutate`).
  tsconfigFile: "stryker.tsconfig.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: "perTest",
  mutate: [
    "packages/core/src/recovery/policies/*.ts",
    "!packages/core/src/recovery/policies/*.test.ts",
    // Pure, beside its callers in reconstruction/ (its contract's types are there).
    "packages/core/src/recovery/reconstruction/decide-reconstruction.ts",
    // checkRunBinding only: loadRunBinding is I/O (see checkRunBindingLines).
    `packages/core/src/finalization/binding.ts:${checkRunBindingLines()}`,
    "packages/core/src/recovery/task-notice.ts",
    "packages/core/src/finalization/finalize-policy.ts",
    "packages/core/src/finalization/finalize-outcome-policy.ts",
    "packages/core/src/records/status-policy.ts",
    "packages/core/src/records/coordinator-phases.ts",
    "packages/core/src/leases/release-policy.ts",
    "packages/core/src/leases/provider-retry-policy.ts",
    "packages/core/src/process/liveness-policy.ts",
    "packages/core/src/copyback/archive/tree-policy.ts",
  ],
  // The sandbox holds packages/core, packages/db (core's tests read its fixtures by relative
  // path) and the root files these configs use; dependencies (@copyback/db included) resolve
  // through the symlinked node_modules to the real workspace.
  ignorePatterns: [
    "/*",
    "!/packages",
    "/packages/*",
    "!/packages/core",
    "!/packages/db",
    "!/tsconfig.base.json",
    "!/stryker.vitest.config.mjs",
    "!/stryker.tsconfig.json",
  ],
  concurrency: 2,
  timeoutMS: 10_000,
  reporters: ["clear-text", "html", "json", "progress"],
  htmlReporter: { fileName: ".reports/mutation/index.html" },
  jsonReporter: { fileName: ".reports/mutation/mutation.json" },
  clearTextReporter: {
    allowColor: false,
    logTests: false,
    reportTests: false,
    reportScoreTable: true,
    reportMutants: true,
  },
  // The goal is at least 90 % per file; below 90 % in total the command fails.
  thresholds: { high: 90, low: 80, break: 90 },
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
};
