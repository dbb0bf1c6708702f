// What is in the data directory before we start: nothing yet, a cluster of our major version, or
// something we must not touch (another major version, or files that are not a cluster).
import fs from "node:fs/promises";
import path from "node:path";
import { EmbeddedPostgresError } from "./errors";

export type DataDirState = { kind: "absent" } | { kind: "initialised"; major: number };

export async function inspectDataDir(dataDir: string, serverMajor: number): Promise<DataDirState> {
  let entries: string[];
  try {
    entries = await fs.readdir(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "absent" };
    throw new EmbeddedPostgresError(
      "INVALID_DATA_DIR",
      `Cannot read the data directory ${dataDir}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (entries.length === 0) return { kind: "absent" };
  let version: string;
  try {
    version = (await fs.readFile(path.join(dataDir, "PG_VERSION"), "utf8")).trim();
  } catch {
    throw new EmbeddedPostgresError(
      "INVALID_DATA_DIR",
      `${dataDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION file). Nothing was changed. Move it aside, or point COPYBACK_HOME at another instance root.`,
    );
  }
  const major = Number.parseInt(version, 10);
  return checkMajor(dataDir, major, serverMajor, version);
}

export function checkMajor(
  dataDir: string,
  major: number,
  serverMajor: number,
  raw = String(major),
): DataDirState {
  if (!Number.isInteger(major)) {
    throw new EmbeddedPostgresError(
      "INVALID_DATA_DIR",
      `${dataDir}/PG_VERSION holds "${raw}", not a PostgreSQL version. Nothing was changed.`,
    );
  }
  if (major !== serverMajor) {
    throw new EmbeddedPostgresError(
      "INCOMPATIBLE_DATA_DIR",
      `The data directory ${dataDir} was created by PostgreSQL ${raw}, but the embedded server is PostgreSQL ${serverMajor}, which cannot open it. ` +
        `Nothing was changed. To keep the data, serve it with a PostgreSQL ${raw} server and set DATABASE_URL, or move it to ${serverMajor} with pg_dump/pg_restore or pg_upgrade; to start empty, move the directory aside.`,
    );
  }
  return { kind: "initialised", major };
}
