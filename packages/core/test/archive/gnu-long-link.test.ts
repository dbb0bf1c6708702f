// Archives written by the real GNU tar (its default "gnu" format) of trees with relative symlink
// targets and paths over 100 bytes: GNU tar puts the full value into a long-name header ("K" for
// a link target, "L" for a name) and the value's first 100 bytes into the ustar field, so the
// ustar field of an in-tree link like "../../node_modules/.pnpm/..." always reads as a
// truncated, climbing target. Such an archive is accepted when the ustar field is exactly a
// prefix of the long value and both readers (our walker, node-tar) agree on the full value;
// a real disagreement is still refused.
import { execFileSync } from "node:child_process";
import { mkdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { receiveWorkspaceArchive, validateArchive } from "../../src/copyback/archive/index";
import { createReadStream } from "node:fs";
import { describeTree, tempDir } from "./helpers";
import { file, gnuLong, header, pax, paxRecord, symlink as symlinkEntry, tar } from "./tar-builder";

let tmp: { path: string; cleanup(): Promise<void> };
let ws: string;

beforeEach(async () => {
  tmp = await tempDir("gnu-long-link");
  ws = join(tmp.path, "ws");
  await mkdir(ws);
});
afterEach(async () => tmp.cleanup());

const LONG_DIR = `node_modules/.pnpm/${"some-package-with-a-long-name".repeat(2)}@1.2.3_${"peer".repeat(8)}/node_modules`;

/** A pnpm-like tree: deep package directories and relative links into them, targets > 100 bytes. */
async function buildPnpmLikeTree(): Promise<{ links: Record<string, string> }> {
  await mkdir(join(ws, LONG_DIR, "pkg/lib"), { recursive: true });
  await writeFile(join(ws, LONG_DIR, "pkg/lib/index.js"), "module.exports = 42;\n");
  await writeFile(join(ws, LONG_DIR, "pkg/package.json"), '{"name":"pkg"}\n');
  await mkdir(join(ws, "apps/web/node_modules/@scope"), { recursive: true });
  const links: Record<string, string> = {
    "apps/web/node_modules/pkg": `../../../${LONG_DIR}/pkg`,
    "apps/web/node_modules/@scope/index.js": `../../../../${LONG_DIR}/pkg/lib/index.js`,
    "node_modules/pkg": `.pnpm/${LONG_DIR.slice("node_modules/.pnpm/".length)}/pkg`,
  };
  for (const [path, target] of Object.entries(links)) {
    expect(Buffer.byteLength(target)).toBeGreaterThan(100);
    await symlink(target, join(ws, path));
  }
  return { links };
}

function gnuTar(args: string[], out: string): void {
  execFileSync("tar", [...args, "-cf", out, "-C", ws, "."]);
}

/** The typeflags GNU tar wrote, in order (to prove the archive really uses long-link headers). */
async function typeflags(archive: string): Promise<string[]> {
  const bytes = await readFile(archive);
  const flags: string[] = [];
  for (let at = 0; at + 512 <= bytes.length; ) {
    const block = bytes.subarray(at, at + 512);
    if (block.every((b) => b === 0)) break;
    const size = parseInt(block.toString("latin1", 124, 136).replace(/\0.*$/s, "").trim() || "0", 8);
    flags.push(String.fromCharCode(block[156] as number));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return flags;
}

describe("GNU tar long-link entries", () => {
  it("R-UA-2: a real GNU tar archive (--format=gnu) of 100+-byte relative in-tree symlink targets validates safe and receives with every link intact", async () => {
    const { links } = await buildPnpmLikeTree();
    const archive = join(tmp.path, "gnu.tar");
    gnuTar(["--format=gnu"], archive);
    const flags = await typeflags(archive);
    expect(flags).toContain("K");
    expect(flags).toContain("L");

    expect(await validateArchive(archive)).toMatchObject({ kind: "safe" });
    const staging = join(tmp.path, "staging");
    await mkdir(staging);
    const received = await receiveWorkspaceArchive({ archive: createReadStream(archive), stagingDir: staging, spillDirectory: tmp.path });
    expect(received.kind).toBe("safe");
    for (const [path, target] of Object.entries(links)) expect(await readlink(join(staging, path))).toBe(target);
    expect(await describeTree(staging)).toEqual(await describeTree(ws));
  });

  it("R-UA-2: GNU tar's default format (no --format) is accepted the same way", async () => {
    await buildPnpmLikeTree();
    const archive = join(tmp.path, "default.tar");
    gnuTar([], archive);
    expect(await validateArchive(archive)).toMatchObject({ kind: "safe" });
  });

  it("R-UA-2: the long target is still judged in full: a GNU long link that climbs out of the tree is refused as an escape", async () => {
    await buildPnpmLikeTree();
    await symlink(`../../../../${"x".repeat(120)}/outside`, join(ws, "apps/web/node_modules/escape"));
    const archive = join(tmp.path, "escape.tar");
    gnuTar(["--format=gnu"], archive);
    const result = await validateArchive(archive);
    expect(result.kind).toBe("rejected");
    if (result.kind === "rejected") expect(result.violations.map((v) => v.code)).toEqual(["symlink_escape"]);
  });

  it("R-UA-2: a real disagreement is still refused: a ustar link field that is not a prefix of the long target", async () => {
    const long = `${"inside/".repeat(16)}target`;
    const archive = join(tmp.path, "forged.tar");
    // A long link that stays inside, with a ustar field that names somewhere else entirely.
    await writeFile(archive, tar(file(`${"inside/".repeat(16)}target`, "x"), gnuLong("K", long), symlinkEntry("link", "../../../etc/passwd")));
    const result = await validateArchive(archive);
    expect(result.kind).toBe("rejected");
    if (result.kind === "rejected") expect(result.violations.map((v) => v.code)).toContain("suspicious_pax_header");
  });

  it("R-UA-2: a prefix is accepted only from a GNU long-link header, never when a pax header replaced the ustar field", async () => {
    const long = `../${"a".repeat(120)}`;
    const archive = join(tmp.path, "pax.tar");
    await writeFile(archive, tar(file(`${"a".repeat(120)}`, "x"), pax(paxRecord("linkpath", long)), header({ name: "dir/link", type: "2", linkname: long.slice(0, 100) })));
    const result = await validateArchive(archive);
    expect(result.kind).toBe("rejected");
    if (result.kind === "rejected") expect(result.violations.map((v) => v.code)).toContain("suspicious_pax_header");
  });

  it("R-UA-2: a GNU long name whose ustar name field is a truncated prefix with '..' is accepted; one that is not its prefix is refused", async () => {
    // "..x" cut at 100 bytes leaves a ".." component in the ustar name field.
    const name = `${"d".repeat(97)}/..x/file`;
    const ok = join(tmp.path, "ok.tar");
    await writeFile(ok, tar(gnuLong("L", name), file(name.slice(0, 100), "x")));
    expect(Buffer.from(name).subarray(0, 100).toString()).toMatch(/\/\.\.$/);
    expect(await validateArchive(ok)).toMatchObject({ kind: "safe" });

    const forged = join(tmp.path, "forged-name.tar");
    await writeFile(forged, tar(gnuLong("L", name), file("../../evil", "x")));
    const result = await validateArchive(forged);
    expect(result.kind).toBe("rejected");
    if (result.kind === "rejected") expect(result.violations.map((v) => v.code)).toContain("suspicious_pax_header");
  });
});
