// Mutation testing of the pure decide-functions (issue 12 item 7): `pnpm mutation`.
// Not part of `npm test`. Runs only the unit tier (*.test.ts, no database) through
// stryker.vitest.config.mjs, type-checks every mutant with packages/core's tsconfig, and writes
// .reports/mutation/index.html and mutation.json (gitignored). The clear-text reporter prints
// the score per file and every surviving mutant.
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
  tsconfigFile: "packages/core/tsconfig.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: "perTest",
  mutate: [
    "packages/core/src/recovery/policies/*.ts",
    "!packages/core/src/recovery/policies/*.test.ts",
    // checkRunBinding only: loadRunBinding (from line 58 on) is I/O.
    "packages/core/src/recovery/binding.ts:40-56",
    "packages/core/src/recovery/task-notice.ts",
    "packages/core/src/finalization/finalize-policy.ts",
    "packages/core/src/finalization/finalize-outcome-policy.ts",
    "packages/core/src/finalization/status-policy.ts",
    "packages/core/src/finalization/coordinator-phases.ts",
    "packages/core/src/leases/release-policy.ts",
    "packages/core/src/leases/provider-retry-policy.ts",
    "packages/core/src/process/liveness-policy.ts",
    "packages/core/src/copyback/archive/tree-policy.ts",
  ],
  // The sandbox holds packages/core and the two root files its configs extend; dependencies
  // (@copyback/db included) resolve through the symlinked node_modules to the real workspace.
  ignorePatterns: [
    "/*",
    "!/packages",
    "/packages/*",
    "!/packages/core",
    // core tests read fixtures of packages/db by relative path.
    "!/packages/db",
    "!/tsconfig.base.json",
    "!/vitest.tiers.ts",
    "!/stryker.vitest.config.mjs",
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
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
};
