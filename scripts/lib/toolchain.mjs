// Shared by bootstrap, quickstart and the test runner: find or install pnpm, install the
// workspace, install chromium. Everything lands inside the clone except apt's chromium.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const PNPM_VERSION = "12.4.2";
const toolsDir = path.join(root, ".tools");
export const pnpmBin = path.join(toolsDir, "node_modules", ".bin", "pnpm");

export function log(message) {
  process.stdout.write(`[copyback] ${message}\n`);
}

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", ...options, env: { ...installEnv(), ...options.env } });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited with status ${result.status ?? result.signal}`);
  }
  return result;
}

/** Environment for installs: better-sqlite3 compiles against Node's installed headers (pnpm 12 ignores npm's nodedir). */
export function installEnv() {
  const env = { ...process.env };
  if (!env.npm_config_nodedir && existsSync("/usr/include/node/node.h")) env.npm_config_nodedir = "/usr";
  env.PRISMA_HIDE_UPDATE_MESSAGE = "1";
  env.CHECKPOINT_DISABLE = "1";
  env.TURBO_TELEMETRY_DISABLED = "1";
  // turbo looks up the package manager binary on PATH; ours lives in .tools/.
  env.PATH = `${path.join(toolsDir, "node_modules", ".bin")}${path.delimiter}${env.PATH ?? ""}`;
  env.NEXT_TELEMETRY_DISABLED = "1";
  return env;
}

function ensurePnpm() {
  if (existsSync(pnpmBin)) return;
  log(`installing pnpm ${PNPM_VERSION} into .tools/`);
  run("npm", ["install", "--prefix", toolsDir, "--no-audit", "--no-fund", "--no-save", `pnpm@${PNPM_VERSION}`]);
}

function ensureWorkspace() {
  const marker = path.join(root, "node_modules", ".modules.yaml");
  const args = ["install", "--frozen-lockfile"];
  if (existsSync(marker) && !process.env.COPYBACK_FORCE_INSTALL) {
    // Warm: pnpm itself decides quickly whether anything changed.
    args.push("--prefer-offline");
  }
  log("installing workspace dependencies (a cold install takes about two minutes)");
  run(pnpmBin, args);
}

export function chromiumPath() {
  for (const candidate of ["/usr/bin/chromium", "/usr/bin/chromium-browser"]) {
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

function bubblewrapInstalled() {
  return ["/usr/bin/bwrap", "/bin/bwrap"].some((candidate) => existsSync(candidate));
}

/** apt-get as root, or through sudo; the same path for chromium and bubblewrap. */
function aptInstall(packages) {
  const sudo = process.getuid && process.getuid() === 0 ? [] : ["sudo"];
  const apt = (...args) => run(sudo[0] ?? "apt-get", sudo.length ? ["apt-get", ...args] : args, { env: { DEBIAN_FRONTEND: "noninteractive" } });
  apt("update", "-qq");
  apt("install", "-y", "-qq", "--no-install-recommends", ...packages);
}

function ensureChromium() {
  // Playwright's own browser download cannot reach its host here; Debian's chromium can.
  if (chromiumPath()) return;
  log("installing Debian chromium for the browser tests (apt)");
  aptInstall(["chromium"]);
}

/**
 * bubblewrap isolates the local provider's sandboxes (DESIGN.md section 4): without it every agent
 * runs with this user's rights. Installed through apt like chromium; when that cannot work (no
 * apt, no root or sudo, no network) the start goes on and the launcher says agents are not
 * isolated, and why, once at start (scripts/launch/isolation.ts).
 */
function ensureBubblewrap({ required }) {
  if (bubblewrapInstalled()) return;
  log("installing Debian bubblewrap (apt), which isolates agents in sandboxes; without it they would run with this user's rights");
  try {
    aptInstall(["bubblewrap"]);
  } catch (error) {
    if (required) throw error;
    log(`could not install bubblewrap (${error instanceof Error ? error.message : String(error)}); agents will run WITHOUT isolation. Install it yourself: apt-get install bubblewrap`);
  }
}

export async function ensureInstalled({ browser = false } = {}) {
  ensurePnpm();
  ensureWorkspace();
  // The test command needs both (its sandbox tests run real bubblewrap); the start command goes on
  // without bubblewrap when apt cannot install it, and says so.
  ensureBubblewrap({ required: browser });
  if (browser) ensureChromium();
}

export function pnpm(args, options = {}) {
  return run(pnpmBin, args, options);
}
