#!/usr/bin/env node
// Installs everything the project needs on a fresh machine that has only Node 20 and npm:
// pnpm (from the npm registry into .tools/, since corepack cannot verify signatures here),
// the workspace's dependencies (with Node's headers for better-sqlite3), and, when asked,
// Debian's chromium for Playwright. Idempotent: a second run takes seconds.
import { ensureInstalled } from "./lib/toolchain.mjs";

const withBrowser = process.argv.includes("--browser");
await ensureInstalled({ browser: withBrowser });
