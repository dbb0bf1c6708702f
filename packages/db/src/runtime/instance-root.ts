// Where an instance keeps its state (embedded database, sandboxes, locks, staging files, logs).
// Library code never reads process.env: applications pass their environment in.
import os from "node:os";
import path from "node:path";
import { DEFAULT_EMBEDDED_PORT, validatePort } from "../embedded/layout";

export function defaultInstanceRoot(): string {
  return path.join(os.homedir(), ".copyback");
}

/** `COPYBACK_HOME` (absolute; a leading `~/` is expanded) or `~/.copyback`. */
export function instanceRootFrom(env: NodeJS.ProcessEnv): string {
  const value = env.COPYBACK_HOME?.trim();
  if (!value) return defaultInstanceRoot();
  if (value === "~") return os.homedir();
  if (value.startsWith("~/")) return path.join(os.homedir(), value.slice(2));
  return path.resolve(value);
}

/** `COPYBACK_DB_PORT` (validated: 1024-65535, never 5432) or 54329. */
export function embeddedPortFrom(env: NodeJS.ProcessEnv): number {
  const value = env.COPYBACK_DB_PORT?.trim();
  if (!value) return DEFAULT_EMBEDDED_PORT;
  return validatePort(/^\d+$/.test(value) ? Number(value) : Number.NaN);
}
