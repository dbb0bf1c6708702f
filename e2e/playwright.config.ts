// The product E2E suite: a real console, worker and PostgreSQL, driven in Debian's chromium.
// The launcher (scripts/launch.ts) starts everything on a private instance root and port.
import { defineConfig } from "@playwright/test";
import os from "node:os";
import path from "node:path";
import fs from "node:fs";

const port = Number(process.env.E2E_PORT ?? 3199);
const workerPort = Number(process.env.E2E_WORKER_HEALTH_PORT ?? 3198);
const home = process.env.E2E_COPYBACK_HOME ?? fs.mkdtempSync(path.join(os.tmpdir(), "copyback-e2e-"));
const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => fs.existsSync(p));
const root = path.resolve(import.meta.dirname, "..");

export default defineConfig({
  testDir: "./tests",
  testMatch: "**/*.e2e.ts",
  fullyParallel: false,
  workers: 1,
  timeout: 60_000,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: ".reports/e2e.json" }]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: "retain-on-failure",
    launchOptions: {
      ...(chromium ? { executablePath: chromium } : {}),
      // Closed network here: background networking would hammer refused connections.
      args: ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    },
  },
  projects: [{ name: "chromium", use: { browserName: "chromium" } }],
  webServer: {
    command: `${path.join(root, "node_modules/.bin/tsx")} ${path.join(root, "scripts/launch.ts")}`,
    url: `http://127.0.0.1:${port}/api/health`,
    timeout: 180_000,
    reuseExistingServer: false,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 20_000 },
    env: {
      COPYBACK_HOME: home,
      COPYBACK_PORT: String(port),
      WORKER_HEALTH_PORT: String(workerPort),
      COPYBACK_DB_PORT: String(Number(process.env.E2E_DB_PORT ?? 54339)),
      ...(process.env.E2E_DATABASE_URL ? { DATABASE_URL: process.env.E2E_DATABASE_URL } : {}),
    },
  },
});
