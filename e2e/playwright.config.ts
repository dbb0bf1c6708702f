// The product E2E suite: a real console, worker and PostgreSQL, driven in Debian's chromium.
// The launcher (scripts/launch.ts) starts everything on a private instance root and port.
import { defineConfig } from "@playwright/test";
import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import { DAYTONA_E2E_KEY, DAYTONA_E2E_KEY_VARIABLE } from "./daytona-emulator";
import { localStorageStatePath } from "./local-board";

const port = Number(process.env.E2E_PORT ?? 3199);
const workerPort = Number(process.env.E2E_WORKER_HEALTH_PORT ?? 3198);
const authPort = Number(process.env.E2E_AUTH_PORT ?? 3197);
const authWorkerPort = Number(process.env.E2E_AUTH_WORKER_HEALTH_PORT ?? 3196);
const tmpHome = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `copyback-e2e-${name}-`));
const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => fs.existsSync(p));
const root = path.resolve(import.meta.dirname, "..");
// The local project's instance root, made once by the runner: workers load this file again and
// inherit the variable, so the sign-in setup finds the launcher's console secret there.
const localHome = (process.env.E2E_LOCAL_HOME ??= tmpHome("local"));
// The authenticated project's instance root, the same way: tests that stage files the console
// reads from it (task attachments under the instance's attachment store) find it here.
const authHome = (process.env.E2E_AUTH_HOME ??= tmpHome("authenticated"));

/** One launcher (console + worker + database) per deployment mode, each on its own home and port. */
function launcher(opts: { mode: "local" | "authenticated"; home: string; port: number; workerPort: number; dbPort: number; databaseUrl?: string }) {
  return {
    command: `${path.join(root, "node_modules/.bin/tsx")} ${path.join(root, "scripts/launch.ts")}`,
    url: `http://127.0.0.1:${opts.port}/api/health`,
    timeout: 180_000,
    reuseExistingServer: false,
    stdout: "pipe" as const,
    stderr: "pipe" as const,
    gracefulShutdown: { signal: "SIGTERM" as const, timeout: 20_000 },
    env: {
      COPYBACK_HOME: opts.home,
      COPYBACK_DEPLOYMENT_MODE: opts.mode,
      COPYBACK_PORT: String(opts.port),
      WORKER_HEALTH_PORT: String(opts.workerPort),
      COPYBACK_DB_PORT: String(opts.dbPort),
      ...(opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl } : {}),
      // The key a Daytona environment staged by a test names (daytona-emulator.ts); no provider is registered by it.
      [DAYTONA_E2E_KEY_VARIABLE]: DAYTONA_E2E_KEY,
    },
  };
}

export default defineConfig({
  testDir: "./tests",
  testMatch: "**/*.e2e.ts",
  fullyParallel: false,
  workers: 1,
  timeout: 60_000,
  retries: 0,
  reporter: [["list"], ["json", { outputFile: ".reports/e2e.json" }]],
  use: {
    trace: "retain-on-failure",
    launchOptions: {
      ...(chromium ? { executablePath: chromium } : {}),
      // Closed network here: background networking would hammer refused connections.
      args: ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    },
  },
  projects: [
    // Local mode trusts the person at the console: the setup opens the launcher's sign-in link
    // (from the console secret under the test's COPYBACK_HOME) and the local tests reuse its cookie.
    { name: "local-sign-in", testMatch: "**/local-sign-in.setup.ts", use: { browserName: "chromium", baseURL: `http://127.0.0.1:${port}` } },
    {
      name: "local",
      testIgnore: "**/auth-*.e2e.ts",
      dependencies: ["local-sign-in"],
      use: { browserName: "chromium", baseURL: `http://127.0.0.1:${port}`, storageState: localStorageStatePath(localHome) },
    },
    { name: "authenticated", testMatch: "**/auth-*.e2e.ts", use: { browserName: "chromium", baseURL: `http://127.0.0.1:${authPort}` } },
  ],
  webServer: [
    launcher({ mode: "local", home: localHome, port, workerPort, dbPort: Number(process.env.E2E_DB_PORT ?? 54339), databaseUrl: process.env.E2E_DATABASE_URL }),
    launcher({
      mode: "authenticated",
      home: authHome,
      port: authPort,
      workerPort: authWorkerPort,
      dbPort: Number(process.env.E2E_AUTH_DB_PORT ?? 54338),
      databaseUrl: process.env.E2E_AUTH_DATABASE_URL,
    }),
  ],
});
