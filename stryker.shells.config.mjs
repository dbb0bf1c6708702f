// Mutation testing of the shells that enforce the fences (issue 20 part 4; the fences table:
// packages/core/src/finalization/FENCES.md): `pnpm mutation:shells`. Not part of `npm test`, nor of
// `pnpm mutation` (the pure policies, stryker.config.mjs). Each mutant runs the integration tier
// of stryker.shells.vitest.config.mjs (the only-this-fence tests and the shells' own integration
// tests) on a real PostgreSQL: set COPYBACK_TEST_DATABASE_URL to a server's superuser URL, or the
// global setup starts the embedded one. Sampled to stay under an hour on 2 cores: only the fence
// functions of each file are mutated (line ranges found anew on every run, as in
// stryker.config.mjs), concurrency 1 (each mutant's tests clone databases and take locks).
import { readFileSync } from "node:fs";
import base from "./stryker.config.mjs";

/**
 * The 1-based line range `start-end` of packages/core/src/<file>, from the first line that starts
 * with `from` to the line before the first later one that starts with `to` (or the last line).
 */
function linesOf(file, from, to) {
  const lines = readFileSync(new URL(`./packages/core/src/${file}`, import.meta.url), "utf8").split(
    "\n",
  );
  const start = lines.findIndex((l) => l.startsWith(from));
  if (start < 0) throw new Error(`stryker.shells.config.mjs: "${from}" not found in ${file}`);
  const next = to === null ? -1 : lines.findIndex((l, i) => i > start && l.startsWith(to));
  if (to !== null && next < 0)
    throw new Error(`stryker.shells.config.mjs: "${to}" not found after "${from}" in ${file}`);
  return `packages/core/src/${file}:${start + 1}-${next < 0 ? lines.length : next}`;
}

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: "stryker.shells.vitest.config.mjs", related: false },
  tsconfigFile: "stryker.shells.tsconfig.json",
  // The base sandbox plus this command's own vitest and tsconfig files.
  ignorePatterns: [
    ...base.ignorePatterns,
    "!/stryker.shells.vitest.config.mjs",
    "!/stryker.shells.tsconfig.json",
  ],
  mutate: [
    // Advisory lock and owner receipt: the take (lock, receipt decision, token-checked writes) and
    // publication's two-halved check (R-OWN-1, R-OWN-9).
    linesOf(
      "finalization/finalization-owner.ts",
      "    const [, lock] = (await connection.query(",
      "    const ownership = new Ownership(",
    ),
    linesOf("finalization/finalization-owner.ts", "  async #assert(", "  release(): Promise"),
    // The success barrier (R-OWN-11, R-FO-2).
    linesOf("records/copyback-proven.ts", "export async function copybackProven(", null),
    // Lease compare-and-sets: the cleanup claim, the held-lease and metadata compares (R-EX-5).
    linesOf(
      "leases/transition-lease.ts",
      "export function claimPendingCleanup(",
      "async function casUpdate(",
    ),
    linesOf("leases/transition-lease.ts", "async function casUpdate(", "/**"),
    // Request ids: a pending stop continues its own intent; the receipt's write compares it (R-SO-2).
    linesOf(
      "leases/release-lease.ts",
      "  const intentJson = (lease.metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.stopIntent];",
      "/**",
    ),
    linesOf(
      "leases/release-lease.ts",
      "  // R-SO-2: the matching receipt clears the intent",
      "  // Only once the stop is recorded",
    ),
    linesOf("leases/stop-intent.ts", "export async function recordExportRetryIntent(", null),
    // heartbeat_runs.xmin: the orphan sweep's conditional write (R-ORP-2).
    linesOf(
      "recovery/file-recovery.ts",
      "export async function failRunBeforeResultInTransaction(",
      "  // R-FO-4: the owned preparation",
    ),
    // The held-lease rule and acquisition's compare-and-set (R-ORP-3, R-EX-4).
    linesOf("leases/lease-holds.ts", "export function leaseHeldSql(", null),
    linesOf(
      "leases/acquire-lease.ts",
      "    const won = await transitionLease(db, {",
      "    if (!won) continue;",
    ),
    linesOf("leases/acquire-lease.ts", "    FROM environment_leases l", "function receiptJson("),
  ],
  concurrency: 1,
  timeoutMS: 60_000,
  htmlReporter: { fileName: ".reports/mutation-shells/index.html" },
  jsonReporter: { fileName: ".reports/mutation-shells/mutation.json" },
  // Reported beside the policies' score; a survivor here is a fence no test isolates.
  thresholds: { high: 90, low: 70, break: null },
  tempDirName: ".stryker-tmp-shells",
};
