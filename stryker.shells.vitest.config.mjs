// The integration tier that `pnpm mutation:shells` (stryker.shells.config.mjs) runs against each
// mutant of the fence-enforcing shells: the only-this-fence tests (test/fences) and the existing
// integration tests of the same shells, on a real PostgreSQL (COPYBACK_TEST_DATABASE_URL, or the
// embedded server the global setup starts without it). Stryker's per-test coverage then runs, for
// each mutant, only the tests that executed its code.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export const SHELL_TESTS = [
  "test/fences/*.integration-test.ts",
  "test/recovery/takeover.integration-test.ts",
  "test/recovery/orphans.integration-test.ts",
  // failRunBeforeResult's callers other than the orphan sweep (the dispatcher's setup-failure handlers).
  "test/recovery/file-recovery.integration-test.ts",
  "test/recovery/lease-cleanup-sweep.integration-test.ts",
  "test/leases/acquire-lease.integration-test.ts",
  "test/leases/release-lease.integration-test.ts",
  "test/leases/transition-lease.integration-test.ts",
  "test/runs/publish-result.integration-test.ts",
];

export default defineConfig({
  root: fileURLToPath(new URL("./packages/core", import.meta.url)),
  test: {
    include: SHELL_TESTS,
    environment: "node",
    globalSetup: [
      fileURLToPath(new URL("./packages/db/src/testing/global-setup.ts", import.meta.url)),
    ],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
