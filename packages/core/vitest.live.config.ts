// R-EX-8: the opt-in live provider tests (test/live/*.live-test.ts), run by the root script
// `pnpm test:live:daytona`. Not a tier of `npm test` (vitest.tiers.ts takes *.test.ts and
// *.integration-test.ts only), so they never run, nor count, there.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/live/**/*.live-test.ts"],
    environment: "node",
    testTimeout: 900_000,
    hookTimeout: 300_000,
  },
});
