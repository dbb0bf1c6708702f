// Where the embedded server's log goes: always to files, never to a pipe. A pipe is drained only
// while its reader's event loop runs; a parent that blocks it (spawnSync in a test runner, a long
// synchronous step) left the server blocked mid-log-line, the checkpointer with it, and every
// `DROP DATABASE ... WITH (FORCE)` waiting for a checkpoint.
//  - PostgreSQL's own logging collector writes `<dataDir>/log/postgresql-<Mon..Sun>.log`: one file
//    per weekday, truncated when its name comes round again, so a week of log is kept and no more
//    (the collector reads its backends' pipe itself; nothing of ours sits on that path).
//  - What the postmaster prints before its collector runs (a port in use, a lock file, a bad data
//    directory) goes to `<instanceRoot>/postgres/server.log`, a file we open and hand it as stdout
//    and stderr. It grows by a few lines per start; at start it is rotated to `server.log.1` once
//    it passes START_LOG_CAP_BYTES.
import fs from "node:fs/promises";
import path from "node:path";
import type { InstanceLayout } from "./layout";

/** The collector's settings (`-c name=value`); `log` is relative to the data directory, which the server's user can always write. */
export const COLLECTOR_SETTINGS: Readonly<Record<string, string>> = {
  logging_collector: "on",
  log_directory: "log",
  log_filename: "postgresql-%a.log",
  log_rotation_age: "1d",
  log_rotation_size: "0",
  log_truncate_on_rotation: "on",
};

export const START_LOG_CAP_BYTES = 1024 * 1024;

export function startLogPath(layout: InstanceLayout): string {
  return path.join(layout.postgresDir, "server.log");
}

export function collectorLogDir(layout: InstanceLayout): string {
  return path.join(layout.dataDir, "log");
}

/**
 * Opens the start log for appending (rotating it first when it passed the cap) and returns the
 * handle with the offset this start's lines begin at.
 */
export async function openStartLog(file: string): Promise<{ handle: fs.FileHandle; offset: number }> {
  const size = await fs.stat(file).then((s) => s.size, () => 0);
  if (size > START_LOG_CAP_BYTES) await fs.rename(file, `${file}.1`);
  const handle = await fs.open(file, "a", 0o600);
  return { handle, offset: (await handle.stat()).size };
}

/** The last `lines` non-empty lines written to `file` from `offset` on (what this start printed). Whole-file read: the start log is capped. */
export async function readStartLog(file: string, offset: number, lines = 40): Promise<string[]> {
  const text = await fs.readFile(file).then(
    (buffer) => buffer.subarray(Math.min(offset, buffer.length)).toString("utf8"),
    () => "",
  );
  return text.split("\n").filter((line) => line.trim().length > 0).slice(-lines);
}

/** The last `lines` lines of the collector's newest file (a failure after the collector took over). */
export async function readCollectorLog(dataDir: string, lines = 20): Promise<string[]> {
  const dir = path.join(dataDir, COLLECTOR_SETTINGS.log_directory!);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const dated = await Promise.all(
    names.map(async (name) => ({ name, mtime: await fs.stat(path.join(dir, name)).then((s) => s.mtimeMs, () => 0) })),
  );
  const newest = dated.sort((a, b) => b.mtime - a.mtime)[0];
  return newest ? readStartLog(path.join(dir, newest.name), 0, lines) : [];
}
