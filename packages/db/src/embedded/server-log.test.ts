import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { COLLECTOR_SETTINGS, START_LOG_CAP_BYTES, openStartLog, readStartLog } from "./server-log";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "copyback-server-log-"));
  dirs.push(dir);
  return dir;
}

describe("the embedded server's log files", () => {
  it("appends each start's lines and reads back only this start's", async () => {
    const file = path.join(tmp(), "server.log");
    fs.writeFileSync(file, "an earlier start\n");
    const { handle, offset } = await openStartLog(file);
    await handle.write("LOG:  could not bind IPv4 address\n\nFATAL:  could not create any TCP/IP sockets\n");
    await handle.close();
    expect(await readStartLog(file, offset)).toEqual([
      "LOG:  could not bind IPv4 address",
      "FATAL:  could not create any TCP/IP sockets",
    ]);
    expect(fs.readFileSync(file, "utf8")).toMatch(/^an earlier start\n/);
  });

  it("rotates the start log to server.log.1 once it passed the cap, keeping one older file", async () => {
    const file = path.join(tmp(), "server.log");
    fs.writeFileSync(file, "x".repeat(START_LOG_CAP_BYTES + 1));
    const { handle, offset } = await openStartLog(file);
    await handle.close();
    expect(offset).toBe(0);
    expect(fs.statSync(file).size).toBe(0);
    expect(fs.statSync(`${file}.1`).size).toBe(START_LOG_CAP_BYTES + 1);
  });

  it("lets PostgreSQL's collector keep one file per weekday, truncated when its name comes round", () => {
    expect(COLLECTOR_SETTINGS).toMatchObject({
      logging_collector: "on",
      log_filename: "postgresql-%a.log",
      log_truncate_on_rotation: "on",
      log_rotation_age: "1d",
    });
  });
});
