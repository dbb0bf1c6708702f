// One lint setup for the whole monorepo (packages run `eslint .` against this file).
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";
import globals from "globals";

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/.next/**", "**/dist/**", "**/generated/**", "**/next-env.d.ts", ".tools/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      // process.env is read only in each app's env.ts (DESIGN.md section 7).
      "no-restricted-properties": ["error", { object: "process", property: "env", message: "Read configuration through env.ts" }],
    },
  },
  {
    files: ["**/env.ts", "**/*.test.ts", "**/*.integration-test.ts", "**/test/**", "**/scripts/**", "bench/**", "e2e/**", "**/*.config.*", "**/bin/**"],
    rules: { "no-restricted-properties": "off" },
  },
  {
    // The web bundle must not pull in the embedded database, migrations or seed (binaries, WASM).
    files: ["apps/web/src/**"],
    rules: {
      "no-restricted-imports": ["error", { paths: [{ name: "@copyback/db", message: "Import @copyback/db/client (or /notify) in the web app." }] }],
    },
  },
  {
    // Core is bundled into the web app too: its value imports of the db package go through
    // @copyback/db/client, never the root (which pulls in the embedded server, migrations and
    // their file URLs: the console's build fails on them). The CLI, which runs only in Node, may.
    files: ["packages/core/src/**"],
    ignores: ["packages/core/src/cli/**", "**/*.test.ts", "**/*.integration-test.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": ["error", { paths: [{ name: "@copyback/db", message: "Import @copyback/db/client in core (the root pulls the embedded server into the console's bundle).", allowTypeImports: true }] }],
    },
  },
  prettier,
);
