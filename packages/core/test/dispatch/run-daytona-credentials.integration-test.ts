// Issue 21: a Daytona environment whose API key is missing or rejected never gets a run. The
// dispatch asks the plugin's credential check (credential-check.ts) before any lease row, so the
// run fails at once with the plugin's typed code and the variable named (never the key), no lease
// and no sandbox exist, the agent never ran and the host workspace is untouched; nothing retries it
// behind the user's back: the failed run is the visible state, and fixing the key and waking the
// agent again is the way on.
import { describe, expect, it } from "vitest";
import { readTree, submitResult } from "./dispatch-fixture";
import { useDaytonaDispatch } from "./daytona-dispatch-fixture";

const world = useDaytonaDispatch();

const MISSING = "DAYTONA_CREDENTIAL_TEST_MISSING";
const WRONG = "DAYTONA_CREDENTIAL_TEST_WRONG";
const WRONG_VALUE = "dtn_wrong_key_credential_test";

describe("a Daytona environment without a usable key (emulator)", { timeout: 60_000 }, () => {
  it("credentials: a missing key refuses the dispatch: the run fails with provider_credentials_missing naming the variable; no lease, no sandbox, no agent", async () => {
    const task = await world.daytonaTask({ files: { "a.txt": "a\n" }, script: `printf x > ran.txt && ${submitResult()}`, config: { apiKeyEnv: MISSING } });
    const before = world.emulator.sandboxes.list().length;
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ status: "failed", errorCode: "provider_credentials_missing" });
    expect(s.run.errorMessage).toContain(MISSING);
    expect(s.events.find((e) => e.code === "environment.credentials_refused")?.payload).toEqual({ code: "provider_credentials_missing", variable: MISSING, environmentId: task.environmentId });
    // The visible state: the task is blocked on the failed run; nothing was requeued or retried.
    expect(s.issue.status).toBe("blocked");
    expect(s.codes).not.toContain("lease.acquired");
    expect(s.codes).not.toContain("run.requeued");
    expect(await world.db.heartbeatRun.count({ where: { nativeIssueId: task.issueId, status: { in: ["queued", "running"] } } })).toBe(0);
    expect(s.leases).toEqual([]);
    expect(world.emulator.sandboxes.list()).toHaveLength(before);
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" } });
  });

  it("credentials: a rejected key (401) refuses the dispatch with provider_credentials_rejected naming the variable, never the key", async () => {
    world.variables.set(WRONG, WRONG_VALUE);
    const task = await world.daytonaTask({ files: { "a.txt": "a\n" }, config: { apiKeyEnv: WRONG } });
    const before = world.emulator.sandboxes.list().length;
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ status: "failed", errorCode: "provider_credentials_rejected" });
    expect(s.run.errorMessage).toContain(WRONG);
    expect(s.events.find((e) => e.code === "environment.credentials_refused")?.payload).toEqual({ code: "provider_credentials_rejected", variable: WRONG, environmentId: task.environmentId });
    expect(s.issue.status).toBe("blocked");
    expect(s.leases).toEqual([]);
    expect(world.emulator.sandboxes.list()).toHaveLength(before);
    expect(JSON.stringify(s)).not.toContain(WRONG_VALUE);
  });

  it("credentials: a fixed key lets the next run of the same environment through (the refusal held nothing)", async () => {
    const task = await world.daytonaTask({ files: { "a.txt": "a\n" }, script: `printf 'b\\n' > b.txt && ${submitResult()}`, config: { apiKeyEnv: MISSING } });
    const refused = await world.runOnce(task);
    expect((await world.state(refused)).run.errorCode).toBe("provider_credentials_missing");
    world.variables.set(MISSING, world.emulator.apiKey);
    try {
      await world.db.issue.update({ where: { id: task.issueId }, data: { status: "todo" } });
      const runId = await world.runOnce(task);
      const s = await world.state(runId);
      expect(s.run.status).toBe("succeeded");
      expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" }, "b.txt": { type: "file", content: "b\n" } });
    } finally {
      world.variables.delete(MISSING);
    }
  });
});
