// The unit tier of packages/core alone (no database, no integration global setup), for Stryker's
// vitest runner (stryker.config.mjs). `related` narrows each run to the tests importing a mutant.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: fileURLToPath(new URL("./packages/core", import.meta.url)),
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    environment: "node",
  },
});
