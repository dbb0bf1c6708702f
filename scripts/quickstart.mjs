#!/usr/bin/env node
// The Quickstart's first command (`npm start`): install what is missing, build the console,
// then run the launcher (embedded database + demo data + console + worker).
import { spawn } from "node:child_process";
import path from "node:path";
import { ensureInstalled, installEnv, log, pnpm, root } from "./lib/toolchain.mjs";

const began = Date.now();
await ensureInstalled({ browser: false });
if (process.env.COPYBACK_WEB_MODE !== "development") {
  log("building the console");
  pnpm(["exec", "turbo", "run", "build", "--filter=@copyback/web", "--output-logs=errors-only"]);
}
log(`ready to launch after ${((Date.now() - began) / 1000).toFixed(0)} s of setup`);
const child = spawn(path.join(root, "node_modules/.bin/tsx"), [path.join(root, "scripts/launch.ts")], {
  cwd: root,
  env: installEnv(),
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
