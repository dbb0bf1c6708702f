// The two vitest tiers every package shares (the third tier, E2E, is Playwright in e2e/).
//   unit:         *.test.ts               no database, no network; fast and parallel
//   integration:  *.integration-test.ts   a real PostgreSQL; each file gets a fresh database
//                                         cloned from a migrated template (packages/db/src/testing)
import type { TestProjectInlineConfiguration } from "vitest/config";
import { fileURLToPath } from "node:url";

const globalSetup = fileURLToPath(new URL("./packages/db/src/testing/global-setup.ts", import.meta.url));

export function tiers(): TestProjectInlineConfiguration[] {
  return [
    {
      extends: true,
      test: {
        name: "unit",
        include: ["src/**/*.test.ts", "test/**/*.test.ts"],
        environment: "node",
      },
    },
    {
      extends: true,
      test: {
        name: "integration",
        include: ["src/**/*.integration-test.ts", "test/**/*.integration-test.ts"],
        environment: "node",
        globalSetup: [globalSetup],
        pool: "forks",
        testTimeout: 60_000,
        hookTimeout: 120_000,
      },
    },
  ];
}
