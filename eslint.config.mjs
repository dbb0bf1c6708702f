// One lint setup for the whole monorepo (packages run `eslint .` against this file).
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";
import globals from "globals";
import boundaries from "eslint-plugin-boundaries";
import { CORE_FLOORS } from "./packages/core/floors.mjs";

// The floors of core (packages/core/floors.mjs): a folder may import the folders listed before it
// (its own floor's earlier ones and every floor below), never one after it: a back-arrow.
const coreFolders = CORE_FLOORS.flat();
const coreType = (folder) => `core-${folder}`;
const coreElements = coreFolders.map((folder) => ({
  type: coreType(folder),
  partialMatch: false,
  pattern: `packages/core/src/${folder}/**`,
}));
const coreBackArrows = coreFolders.slice(0, -1).map((folder, i) => ({
  from: { element: { type: coreType(folder) } },
  disallow: { to: { element: { types: { anyOf: coreFolders.slice(i + 1).map(coreType) } } } },
}));

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
  {
    files: ["packages/core/src/**/*.ts"],
    plugins: { boundaries },
    settings: {
      "boundaries/root-path": import.meta.dirname,
      "boundaries/elements": coreElements,
      "import/resolver": { node: { extensions: [".ts"] } },
    },
    rules: {
      "boundaries/dependencies": ["error", { default: "allow", policies: coreBackArrows }],
    },
  },
  {
    // The kernel's root files stand on nothing of core (packages/core/floors.mjs).
    files: ["packages/core/src/errors.ts", "packages/core/src/database-failure.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [{ group: ["./*", "../*"], message: "The kernel's root files import nothing of core (packages/core/floors.mjs)." }] }] },
  },
  prettier,
);
