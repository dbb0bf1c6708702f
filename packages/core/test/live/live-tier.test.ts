// R-EX-8: the live provider tests are opt-in. `npm test`'s vitest tiers must not take them (a
// skipped live test would otherwise be counted by every run, and a set key would make `npm test`
// reach Daytona), while the live config (root script test:live:daytona) takes exactly them.
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tiers } from "../../../../vitest.tiers";
import live from "../../vitest.live.config";

/** Pure: a vitest include glob (`**`, `*`) as a regular expression over a path from the package root. */
function globRegExp(glob: string): RegExp {
  const source = glob
    .split("**/")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*"))
    .join("(?:.*/)?");
  return new RegExp(`^${source}$`);
}

const liveFiles = readdirSync(path.join(import.meta.dirname)).filter((name) => name.endsWith(".live-test.ts")).map((name) => `test/live/${name}`);

describe("the live tier", () => {
  it("R-EX-8 npm test's tiers take no live test, and the live config takes every one", () => {
    expect(liveFiles).toContain("test/live/daytona.live-test.ts");
    const tierGlobs = tiers().flatMap((tier) => tier.test?.include ?? []);
    expect(tierGlobs.length).toBeGreaterThan(0);
    // The check itself can fail: the tiers do take an ordinary test of this folder.
    expect(tierGlobs.some((glob) => globRegExp(glob).test("test/live/live-tier.test.ts"))).toBe(true);
    for (const file of liveFiles) {
      expect(tierGlobs.filter((glob) => globRegExp(glob).test(file)), file).toEqual([]);
      expect((live.test?.include ?? []).some((glob) => globRegExp(glob).test(file)), file).toBe(true);
    }
  });
});
