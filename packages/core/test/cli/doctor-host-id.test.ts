// Issue 23 part 1: `copyback doctor` shows the instance's host id (from COPYBACK_HOST_ID or the
// instance root's file), never creates one, and fails with the clear error for a bad one. Real
// files in a temporary instance root. No requirement id exists: named by the rule.
import { chmod, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main";
import { HOST_ID_FILE } from "../../src/deployment/host-id";
import { NO_USER_HOME, removeTempDirs, tempDir } from "./helpers";

afterEach(removeTempDirs);

async function doctorOn(home: string, hostId?: string) {
  let stdout = "";
  const code = await main(["--json", "doctor", "--home", home], {
    stdout: (t: string) => (stdout += t),
    stderr: () => undefined,
    env: { copybackHome: home, userHome: NO_USER_HOME, ...(hostId !== undefined ? { hostId } : {}) },
  });
  const doc = JSON.parse(stdout) as { checks: { id: string; status: string; summary: string; details: Record<string, unknown> }[] };
  return { code, check: doc.checks.find((c) => c.id === "host_id")! };
}

describe("copyback doctor: host id (issue 23)", () => {
  it("host id: doctor shows the instance root's host id, or says none yet without creating one", async () => {
    const home = await tempDir("doctor-host");
    await chmod(home, 0o700);
    const none = await doctorOn(home);
    expect(none.check).toMatchObject({ status: "ok", details: { hostId: null } });
    expect(await readdir(home)).not.toContain(HOST_ID_FILE);
    await writeFile(path.join(home, HOST_ID_FILE), "host-a\n");
    const found = await doctorOn(home);
    expect(found.check).toMatchObject({ status: "ok", details: { hostId: "host-a", source: "file" } });
    expect(found.check.summary).toContain("host id host-a");
  });

  it("host id: COPYBACK_HOST_ID is shown; a bad one fails doctor (exit 3) with the clear error", async () => {
    const home = await tempDir("doctor-host");
    await chmod(home, 0o700);
    expect((await doctorOn(home, "host-b")).check).toMatchObject({ status: "ok", details: { hostId: "host-b", source: "env" } });
    const bad = await doctorOn(home, "Bad Host");
    expect(bad.code).toBe(3);
    expect(bad.check).toMatchObject({ status: "fail", details: { code: "host_id_invalid" } });
    expect(bad.check.summary).toMatch(/COPYBACK_HOST_ID/);
  });
});
