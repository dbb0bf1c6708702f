// As root, a clone under a directory the `postgres` account cannot enter (as
// /root/copyback is) runs a hash-verified copy of the PostgreSQL binaries, made once and checked
// at every start. Real files: a copy of the package's tree in a 0700 directory stands for the
// clone, a private base stands for /var/lib/copyback.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { postgresBinaries } from "../src/embedded/binaries";
import { binaryTreeRoot, reachableBinaries } from "../src/embedded/binary-placement";
import { resolveServerUser } from "../src/embedded/server-user";
import { tempInstanceRoot } from "./embedded-fixtures/support";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const asRoot = process.getuid?.() === 0;

describe.runIf(asRoot)("PostgreSQL binaries the server's account cannot reach", () => {
  it("copies them once into the base (root-owned, 0755, verified), reuses the copy, and remakes a tampered one", async () => {
    const packaged = await postgresBinaries();
    const user = await resolveServerUser(() => undefined);
    // The "clone": a 0700 directory (like /root) holding the package's tree.
    const clone = tempInstanceRoot();
    const baseParent = tempInstanceRoot();
    dirs.push(clone, baseParent);
    fs.chmodSync(baseParent, 0o711);
    const base = path.join(baseParent, "copyback");
    const tree = path.join(clone, "native");
    fs.cpSync(binaryTreeRoot(packaged), tree, { recursive: true, verbatimSymlinks: true });
    const blocked = { postgres: path.join(tree, "bin/postgres"), initdb: path.join(tree, "bin/initdb"), major: packaged.major };
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);

    const first = await reachableBinaries(blocked, user, log, { base });
    expect(first.postgres).toMatch(new RegExp(`^${base}/postgres-${packaged.major}-[0-9a-f]{16}/bin/postgres$`));
    const copyDir = path.dirname(path.dirname(first.postgres));
    expect(fs.statSync(copyDir).mode & 0o777).toBe(0o755);
    expect(fs.statSync(copyDir).uid).toBe(0);
    expect(fs.statSync(clone).mode & 0o777).toBe(0o700); // nothing of the clone was widened
    expect(lines.some((l) => l.includes(`cannot enter ${clone}`) && l.includes("verified by hash"))).toBe(true);
    expect(fs.readdirSync(base).filter((n) => n.startsWith(".postgres-staging-"))).toEqual([]);
    // Complete (bin, lib through the binaries' rpath, share): both run as the server's account.
    for (const binary of [first.postgres, first.initdb]) {
      const version = execFileSync(binary, ["--version"], { uid: user.kind === "switch" ? user.uid : 0, encoding: "utf8" });
      expect(version).toContain(`(PostgreSQL) ${packaged.major}`);
    }

    lines.length = 0;
    expect(await reachableBinaries(blocked, user, log, { base })).toEqual(first);
    expect(lines).toEqual([]); // reused, no copy

    // A changed file in the copy: moved aside, copied again from the package.
    fs.appendFileSync(path.join(copyDir, "share/postgresql/postgres.bki"), "-- tampered\n");
    expect(await reachableBinaries(blocked, user, log, { base })).toEqual(first);
    expect(lines.some((l) => l.includes("no longer match their recorded hash"))).toBe(true);
    expect(fs.readFileSync(path.join(copyDir, "share/postgresql/postgres.bki"), "utf8")).not.toContain("tampered");
    expect(fs.readdirSync(base).some((n) => n.includes(".mismatch-"))).toBe(true);
  });
});
