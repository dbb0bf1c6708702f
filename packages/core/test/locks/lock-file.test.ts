import { closeSync, linkSync, lstatSync, openSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileIfMissing, descriptorOpenOn, openVerifiedDatabase, tryBeginImmediate } from "../../src/copyback/locks/lock-file";
import { tempDir } from "./helpers";

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir("lockfile")));
afterEach(() => cleanup());

describe("lock file opening", () => {
  it("R-LK-2: BEGIN IMMEDIATE with busy timeout 0 excludes a second connection at once, and a rollback frees it", () => {
    const file = path.join(dir, "x.lock.sqlite");
    createFileIfMissing(file);
    const a = openVerifiedDatabase(file, "x");
    const b = openVerifiedDatabase(file, "x");
    const started = performance.now();
    expect(tryBeginImmediate(a.db)).toBe(true);
    expect(tryBeginImmediate(b.db)).toBe(false);
    expect(performance.now() - started).toBeLessThan(100); // no busy-handler sleep
    a.db.exec("ROLLBACK");
    expect(tryBeginImmediate(b.db)).toBe(true);
    b.db.exec("ROLLBACK");
    a.db.close();
    b.db.close();
    expect(lstatSync(file).size).toBe(0); // the lock never writes the file
  });

  it("creates the file privately and never through a symlink at the name", () => {
    const file = path.join(dir, "new.lock.sqlite");
    createFileIfMissing(file);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    const victim = path.join(dir, "victim");
    const link = path.join(dir, "link.lock.sqlite");
    symlinkSync(victim, link); // dangling: O_CREAT would create the victim if it followed
    createFileIfMissing(link);
    expect(() => lstatSync(victim)).toThrow();
    expect(() => openVerifiedDatabase(link, "link")).toThrow(expect.objectContaining({ code: "lock_file_symlink" }));
  });

  it("refuses hard links and non-files by code", () => {
    const file = path.join(dir, "h.lock.sqlite");
    writeFileSync(file, "");
    linkSync(file, path.join(dir, "other-name"));
    expect(() => openVerifiedDatabase(file, "h")).toThrow(expect.objectContaining({ code: "lock_file_hard_linked" }));
    expect(() => openVerifiedDatabase(dir, "d")).toThrow(expect.objectContaining({ code: "lock_file_not_regular" }));
  });

  it("finds whether this process has a descriptor on an inode, without opening anything", () => {
    const file = path.join(dir, "probe");
    writeFileSync(file, "");
    const st = lstatSync(file);
    expect(descriptorOpenOn(st.dev, st.ino)).toBe(false);
    const fd = openSync(file, "r");
    expect(descriptorOpenOn(st.dev, st.ino)).toBe(true);
    closeSync(fd);
    expect(descriptorOpenOn(st.dev, st.ino)).toBe(false);
  });
});
