// First start: create the cluster with initdb in a private staging directory and move it into
// place with one rename, so a crash mid-initdb never leaves a half-made data directory behind.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { PostgresBinaries } from "./binaries";
import type { Credentials } from "./credentials";
import { EmbeddedPostgresError } from "./errors";
import type { ClusterLocation } from "./cluster-location";
import type { InstanceLayout } from "./layout";
import { isProcessAlive } from "./processes";
import { spawnIdentity, type ServerUser } from "./server-user";

const STAGING_PREFIX = "initdb-";

export async function initialiseCluster(args: {
  layout: InstanceLayout;
  location: ClusterLocation;
  binaries: PostgresBinaries;
  user: ServerUser;
  credentials: Credentials;
  log: (line: string) => void;
}): Promise<void> {
  const { layout, location, binaries, user, credentials, log } = args;
  const staging = path.join(
    location.home,
    `${STAGING_PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`,
  );
  await fs.mkdir(staging, { mode: 0o700 });
  try {
    // The password file lives in the owner-only staging directory, readable by the server user
    // alone, and is deleted as soon as initdb is done.
    const pwfile = path.join(staging, "pwfile");
    await fs.writeFile(pwfile, `${credentials.password}\n`, { mode: 0o600 });
    if (user.kind === "switch") {
      await fs.chown(staging, user.uid, user.gid);
      await fs.chown(pwfile, user.uid, user.gid);
    }
    const target = path.join(staging, "data");
    log(`initialising a new PostgreSQL ${binaries.major} cluster in ${location.dataDir}`);
    await runInitdb(binaries.initdb, staging, user, [
      `--pgdata=${target}`,
      `--username=${credentials.user}`,
      `--pwfile=${pwfile}`,
      "--auth=scram-sha-256",
      "--encoding=UTF8",
      // C collation: identical ordering on every machine and no dependency on installed OS locales.
      "--locale=C",
    ]);
    await fs.rm(pwfile, { force: true });
    try {
      await fs.rename(target, location.dataDir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another process initialised the same instance root first: its cluster wins, ours goes.
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
      log(`another process initialised ${location.dataDir} first; using its cluster`);
    }
    if (location.relocated) {
      await fs.symlink(location.dataDir, layout.dataDir).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      });
      log(
        `${layout.dataDir} -> ${location.dataDir} (the server's account cannot enter ${layout.instanceRoot}'s parent directories)`,
      );
    }
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/** Staging directories left by an initdb that crashed: never started, so they hold no user data. */
export async function removeAbandonedStaging(location: ClusterLocation): Promise<void> {
  let entries: string[];
  try {
    entries = await fs.readdir(location.home);
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!entry.startsWith(STAGING_PREFIX)) continue;
    const pid = Number.parseInt(entry.slice(STAGING_PREFIX.length), 10);
    if (Number.isInteger(pid) && pid > 0 && !isProcessAlive(pid)) {
      await fs.rm(path.join(location.home, entry), { recursive: true, force: true });
    }
  }
}

function runInitdb(initdb: string, cwd: string, user: ServerUser, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(initdb, args, {
      cwd,
      ...spawnIdentity(user),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", (error) =>
      reject(
        new EmbeddedPostgresError(
          "INIT_FAILED",
          `Could not run initdb (${initdb}): ${error.message}`,
          { cause: error },
        ),
      ),
    );
    child.once("close", (code, signal) => {
      if (code === 0) return resolve();
      reject(
        new EmbeddedPostgresError(
          "INIT_FAILED",
          `initdb failed (exit ${code ?? signal}); no database was created. Output:\n${output.trim().split("\n").slice(-15).join("\n")}`,
        ),
      );
    });
  });
}
