#!/usr/bin/env node
// The Quickstart's second command (`npm test`): install what is missing (pnpm, dependencies,
// Debian chromium), then run every tier (scripts/run-tests.ts). Extra args pick tiers:
// `npm test -- unit integration` (static, unit, integration, e2e, torture).
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ensureInstalled, installEnv, root } from "./lib/toolchain.mjs";

await ensureInstalled({ browser: true });
const result = spawnSync(path.join(root, "node_modules/.bin/tsx"), [path.join(root, "scripts/run-tests.ts"), ...process.argv.slice(2)], {
  cwd: root,
  env: installEnv(),
  stdio: "inherit",
});
process.exit(result.status ?? 1);
