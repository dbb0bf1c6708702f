import { describe, expect, it } from "vitest";
import { findPruneArgs, parseHashes, parseListing, planScan, type DaytonaStatCache } from "./delta-scan";
import { tarExcludeArgs } from "./export";

const listing = (...rows: string[][]) => Buffer.from(rows.map((r) => `${r.join("\0")}\0`).join(""));
const h = (c: string) => c.repeat(64);

describe("daytona delta scan (pure)", () => {
  const rows = [
    ["d", "755", "4096", "10", "100.5", "100.5", "src", ""],
    ["f", "644", "5", "11", "100.5", "100.5", "src/a.txt", ""],
    ["f", "4755", "7", "12", "199.9", "199.9", "src/b.bin", ""],
    ["l", "777", "9", "13", "100.5", "100.5", "link", "src/a.txt"],
  ];

  it("reads find's NUL-separated listing and refuses a malformed one", () => {
    const parsed = parseListing(listing(...rows));
    expect(parsed[2]).toMatchObject({ type: "f", mode: 0o755, size: 7, ino: "12", path: "src/b.bin" });
    expect(parsed[3]).toMatchObject({ type: "l", target: "src/a.txt" });
    expect(() => parseListing(Buffer.from(["f", "644", ""].join("\u0000")))).toThrow(expect.objectContaining({ code: "provider_delta_mismatch" }));
  });

  it("hashes only what the cache cannot vouch for, caches nothing racy, sorts the manifest", () => {
    const cache: DaytonaStatCache = { version: 1, files: { "src/a.txt": [5, 0o644, "11", "100.5", "100.5", h("a")] } };
    const plan = planScan(parseListing(listing(...rows)), cache, 200);
    expect(plan.toHash).toEqual(["src/b.bin"]);
    const done = plan.finish([h("b")]);
    expect(done.manifest.entries.map((e) => e.path)).toEqual(["link", "src", "src/a.txt", "src/b.bin"]);
    expect(done.manifest.entries[2]).toEqual({ path: "src/a.txt", type: "file", mode: 0o644, sha256: h("a"), size: 5 });
    // b.bin changed 0.1 s before the scan: hashed, not cached.
    expect(Object.keys(done.cache.files)).toEqual(["src/a.txt"]);
    expect([done.hashedFiles, done.hashedBytes]).toEqual([1, 7]);
    // A moved ctime (a write) is hashed again; so is everything without a cache.
    const touched = listing(rows[1]!.map((v, i) => (i === 5 ? "150.0" : v)));
    expect(planScan(parseListing(touched), cache, 200).toHash).toEqual(["src/a.txt"]);
    expect(planScan(parseListing(listing(...rows)), undefined, 200).toHash).toEqual(["src/a.txt", "src/b.bin"]);
    expect(() => plan.finish([])).toThrow(expect.objectContaining({ code: "provider_delta_mismatch" }));
  });

  it("refuses entries a manifest cannot hold (the full export decides about them)", () => {
    expect(() => planScan(parseListing(listing(["p", "644", "0", "1", "1", "1", "fifo", ""])), undefined, 9)).toThrow(expect.objectContaining({ code: "delta_unsupported_entry" }));
  });

  it("reads sha256sum's lines, escaped names included", () => {
    expect(parseHashes(`${h("a")}  x\n\\${h("b")}  we\\nird\n`)).toEqual([h("a"), h("b")]);
    expect(() => parseHashes("nothex  x\n")).toThrow(expect.objectContaining({ code: "provider_delta_mismatch" }));
  });

  it("turns copyback's exclusions into find prunes and tar excludes, without wildcards", () => {
    expect(findPruneArgs(undefined)).toEqual([]);
    expect(findPruneArgs(["node_modules", "./build", "a/b*"])).toEqual(["(", "-name", "node_modules", "-o", "-path", "./build", "-o", "-path", "./a/b\\*", ")", "-prune", "-o"]);
    expect(tarExcludeArgs(["node_modules", "./build"])).toEqual(["--no-wildcards", "--no-anchored", "--exclude=node_modules", "--anchored", "--exclude=./build"]);
    expect(() => tarExcludeArgs(["../up"])).toThrow();
  });
});
