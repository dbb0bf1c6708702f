import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Parser, type ReadEntry } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeHeader, type HeaderFields } from "../../src/copyback/archive/tar-header";
import { validateArchive } from "../../src/copyback/archive/index";
import { tempDir } from "./helpers";
import { EOF } from "./tar-builder";

let tmp: { path: string; cleanup(): Promise<void> };
beforeAll(async () => {
  tmp = await tempDir("header");
});
afterAll(async () => tmp.cleanup());

function parse(bytes: Buffer, strict = true): ReadEntry[] {
  const entries: ReadEntry[] = [];
  const parser = new Parser({
    strict,
    onReadEntry: (e) => void (entries.push(e), e.resume()),
  });
  parser.end(bytes);
  return entries;
}

const CASES: HeaderFields[] = [
  { path: "a.txt", type: "File", mode: 0o644, size: 0, mtime: 1_700_000_000 },
  { path: "x".repeat(100), type: "File", mode: 0o755, size: 0, mtime: 1 },
  { path: `${"d".repeat(60)}/${"e".repeat(60)}`, type: "File", mode: 0o600, size: 0, mtime: 2 },
  { path: `${"p".repeat(150)}/${"n".repeat(99)}`, type: "File", mode: 0o644, size: 0, mtime: 3 },
  { path: `${"q".repeat(200)}/${"r".repeat(200)}/f`, type: "File", mode: 0o644, size: 0, mtime: 4 },
  { path: "ünïcödé/ファイル.txt", type: "File", mode: 0o644, size: 0, mtime: 5 },
  { path: `${"s".repeat(120)}/`, type: "Directory", mode: 0o750, size: 0 },
  {
    path: "sub/link",
    type: "SymbolicLink",
    mode: 0o777,
    size: 0,
    linkpath: `../${"t".repeat(150)}`,
    mtime: 6,
  },
  { path: "lien", type: "SymbolicLink", mode: 0o777, size: 0, linkpath: "cible-éé", mtime: 7 },
  { path: "..foo/x", type: "File", mode: 0o644, size: 0, mtime: 8 },
];

describe("tar header encoding", () => {
  it.each(CASES.map((c) => [c.path.slice(0, 40), c] as const))(
    "node-tar reads back %s exactly",
    (_label, fields) => {
      const [entry] = parse(Buffer.concat([...encodeHeader(fields), EOF]));
      expect(entry?.path).toBe(fields.path);
      expect(entry?.type).toBe(fields.type);
      expect(entry?.linkpath || undefined).toBe(fields.linkpath);
      expect(entry?.mode).toBe(fields.mode);
      expect(entry?.size).toBe(fields.size);
      if (fields.mtime !== undefined) expect(entry?.mtime?.getTime()).toBe(fields.mtime * 1000);
    },
  );

  it("every case validates and GNU tar lists the same paths", async () => {
    const file = join(tmp.path, "all.tar");
    await writeFile(file, Buffer.concat([...CASES.flatMap((c) => encodeHeader(c)), EOF]));
    expect(await validateArchive(file)).toEqual({
      kind: "safe",
      entries: CASES.length,
      totalBytes: 0,
    });
    const listed = execFileSync("tar", ["-tf", file], { encoding: "utf8" }).trimEnd().split("\n");
    expect(listed).toEqual(CASES.map((c) => c.path));
  });

  it("carries sizes of 8 GiB and more in a pax record", () => {
    const size = 9 * 1024 ** 3;
    const blocks = encodeHeader({ path: "huge", type: "File", mode: 0o644, size, mtime: 0 });
    expect(blocks).toHaveLength(3);
    // Only the header: the body is not there, so read without strict truncation errors.
    const [entry] = parse(Buffer.concat(blocks), false);
    expect(entry?.size).toBe(size);
  });
});
