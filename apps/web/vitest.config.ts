import path from "node:path";
import { defineConfig } from "vitest/config";
import { tiers } from "../../vitest.tiers";

const src = path.resolve(import.meta.dirname, "src");

export default defineConfig({
  resolve: {
    alias: [
      // The app's `~/...` imports (tsconfig paths).
      { find: /^~\//, replacement: `${src}/` },
      // `server-only` throws outside React Server Components; tests call server code directly.
      { find: /^server-only$/, replacement: path.resolve(import.meta.dirname, "node_modules/server-only/empty.js") },
    ],
  },
  test: { projects: tiers() },
});
