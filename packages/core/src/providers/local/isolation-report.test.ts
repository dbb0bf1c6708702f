// Where isolation cannot work, the launcher and the console say why.
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUBBLEWRAP_MISSING_REASON, diagnoseBubblewrap, explainProbeFailure } from "./bubblewrap";
import { isolationReport, isolationWarning, notIsolatedReason, readIsolationReport, writeIsolationReport } from "./isolation-report";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
const now = new Date("2026-12-01T10:00:00.000Z");

describe("why agents are not isolated", () => {
  it("a missing bwrap says so and how to install it", async () => {
    const empty = await mkdtemp(join(tmpdir(), "copyback-no-bwrap-"));
    dirs.push(empty);
    expect(await diagnoseBubblewrap(empty)).toEqual({ usable: false, reason: BUBBLEWRAP_MISSING_REASON });
    expect(BUBBLEWRAP_MISSING_REASON).toContain("apt-get install bubblewrap");
  });

  it("a bwrap that cannot make namespaces names the cause and the fix", () => {
    const reason = explainProbeFailure("/usr/bin/bwrap", { stderr: "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces\n", timedOut: false, code: 1 });
    expect(reason).toContain("/usr/bin/bwrap");
    expect(reason).toContain("No permissions to creating new namespace");
    expect(reason).toContain("does not allow the namespaces");
    expect(explainProbeFailure("/b", { stderr: "", timedOut: false, code: 3 })).toContain("(exit 3)");
    expect(explainProbeFailure("/b", { stderr: "", timedOut: true })).toContain("did not finish a test sandbox");
  });

  it("the launcher's warning and the console's reason come from the report, nothing when isolated", () => {
    const unisolated = isolationReport({ usable: false, reason: "bubblewrap is missing" }, now, "h1");
    expect(unisolated).toEqual({ schema: "copyback.host-isolation.v1", isolated: false, reason: "bubblewrap is missing", host: "h1", checkedAt: "2026-12-01T10:00:00.000Z" });
    expect(isolationWarning(unisolated)).toMatch(/^WARNING: agents are NOT isolated: bubblewrap is missing\. .*database credentials/);
    expect(notIsolatedReason(unisolated)).toBe("bubblewrap is missing (worker on h1, checked 2026-12-01T10:00:00.000Z)");
    const isolated = isolationReport({ usable: true, bwrap: "/usr/bin/bwrap" }, now, "h1");
    expect(isolated.reason).toBeNull();
    expect(isolationWarning(isolated)).toBeNull();
    expect(notIsolatedReason(isolated)).toBeNull();
    expect(notIsolatedReason(null)).toBeNull();
  });

  it("the report file is replaced whole (0600) and a broken one reads as none", async () => {
    const root = await mkdtemp(join(tmpdir(), "copyback-isolation-"));
    dirs.push(root);
    expect(await readIsolationReport(root)).toBeNull();
    const report = isolationReport({ usable: false, reason: "r" }, now, "h");
    await writeIsolationReport(root, report);
    await writeIsolationReport(root, report);
    expect(await readIsolationReport(root)).toEqual(report);
    expect((await stat(join(root, "isolation.json"))).mode & 0o777).toBe(0o600);
    expect(await readdir(root)).toEqual(["isolation.json"]);
    await writeFile(join(root, "isolation.json"), "{ not json");
    expect(await readIsolationReport(root)).toBeNull();
    await writeFile(join(root, "isolation.json"), JSON.stringify({ ...report, isolated: "no" }));
    expect(await readIsolationReport(root)).toBeNull();
  });
});
