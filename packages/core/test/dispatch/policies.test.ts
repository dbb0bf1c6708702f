// The executor's pure decisions: can a claimed run start, what an agent's exit means, the adapter
// settings, the output line cut and the busy-lease wait.
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/errors";
import { agentAdapterConfig } from "../../src/records/adapter-config";
import { decideAfterAgent, decideAfterExecFailure, type AgentExit } from "../../src/dispatch/agent-outcome";
import { cutToBytes } from "../../src/dispatch/agent-output";
import { waitForLease } from "../../src/dispatch/lease-wait";
import { decideRunContext, type RunContextSnapshot } from "../../src/dispatch/run-context";

const ready: RunContextSnapshot = {
  run: { id: "r", companyId: "c", status: "running", agentId: "a", issueId: "i" },
  agent: { id: "a", command: ["/bin/true"], adapterConfig: { timeoutSeconds: 5 }, environmentId: "e", archived: false },
  environment: { id: "e", pluginId: "builtin.local", provider: "local" },
  issue: { id: "i", executionWorkspaceId: "w" },
  workspace: { id: "w", hostPath: "/srv/w" },
};

describe("decideRunContext", () => {
  it("starts a complete run with its parsed adapter settings", () => {
    const decision = decideRunContext(ready);
    expect(decision).toMatchObject({ kind: "ready", context: { argv: ["/bin/true"], adapter: { timeoutSeconds: 5, env: {} }, hostPath: "/srv/w" } });
  });

  it.each<[string, Partial<RunContextSnapshot>, string]>([
    ["missing run", { run: null }, "run_not_found"],
    ["archived agent", { agent: { ...ready.agent!, archived: true } }, "agent_archived"],
    ["empty command", { agent: { ...ready.agent!, command: [] } }, "agent_without_command"],
    ["no environment", { agent: { ...ready.agent!, environmentId: null }, environment: null }, "agent_without_environment"],
    ["no workspace", { issue: { id: "i", executionWorkspaceId: null }, workspace: null }, "issue_without_workspace"],
    ["bad adapter config", { agent: { ...ready.agent!, adapterConfig: { timeoutSeconds: -1 } } }, "agent_adapter_config_invalid"],
  ])("refuses a run with %s", (_name, patch, code) => {
    expect(decideRunContext({ ...ready, ...patch })).toMatchObject({ kind: "reject", code });
  });

  it("leaves a run that is no longer running alone", () => {
    expect(decideRunContext({ ...ready, run: { ...ready.run!, status: "cancelled" } })).toEqual({ kind: "not_running", status: "cancelled" });
  });
});

describe("agentAdapterConfig", () => {
  it("defaults the timeout and env and keeps unknown keys", () => {
    expect(agentAdapterConfig.parse({ resultSchema: "v1" })).toEqual({ adapter: "process", timeoutSeconds: 600, env: {}, resultSchema: "v1" });
  });
  it("refuses reserved and malformed variable names", () => {
    expect(agentAdapterConfig.safeParse({ env: { COPYBACK_RUN_ID: "x" } }).success).toBe(false);
    expect(agentAdapterConfig.safeParse({ env: { "NOT-A-NAME": "x" } }).success).toBe(false);
    expect(agentAdapterConfig.safeParse({ env: { GOOD_NAME: "x" } }).success).toBe(true);
  });
});

describe("decideAfterAgent", () => {
  const clean: AgentExit = { exitCode: 0, signal: null, timedOut: false, cancelled: false };
  const base = { runStatus: "running", acceptedResultId: null, exit: clean, resultFileNote: null };

  it("finalizes an accepted result whatever the exit (the finish API may precede a hang)", () => {
    expect(decideAfterAgent({ ...base, acceptedResultId: "res", exit: { ...clean, exitCode: null, timedOut: true } })).toEqual({ kind: "finalize", resultId: "res" });
  });

  it.each<[string, AgentExit, string]>([
    ["cancelled", { ...clean, exitCode: null, signal: "SIGKILL", cancelled: true }, "agent_cancelled"],
    ["timed out", { ...clean, exitCode: null, signal: "SIGKILL", timedOut: true }, "agent_timed_out"],
    ["non-zero exit", { ...clean, exitCode: 3 }, "agent_exit_nonzero"],
    ["killed by a signal", { ...clean, exitCode: null, signal: "SIGSEGV" }, "agent_exit_nonzero"],
    ["clean exit", clean, "agent_exited_without_result"],
  ])("fails a run without a result after a %s", (_name, exit, code) => {
    expect(decideAfterAgent({ ...base, exit })).toMatchObject({ kind: "fail", code });
  });

  it("names the exit code and a rejected result file in the message", () => {
    const decision = decideAfterAgent({ ...base, exit: { ...clean, exitCode: 3 }, resultFileNote: "Its result file was rejected (result_schema_invalid: x)." });
    expect(decision).toMatchObject({ kind: "fail", message: expect.stringContaining("exited with code 3") });
    expect(decision).toMatchObject({ message: expect.stringContaining("result_schema_invalid") });
  });

  it("leaves a run settled elsewhere to its settler", () => {
    expect(decideAfterAgent({ ...base, runStatus: "cancelled", acceptedResultId: "res" })).toEqual({ kind: "not_running", status: "cancelled" });
  });
});

describe("decideAfterExecFailure", () => {
  it("finalizes a result the finish API accepted before the provider's reply to exec was lost", () => {
    expect(decideAfterExecFailure({ runStatus: "running", acceptedResultId: "res" })).toEqual({ kind: "finalize", resultId: "res" });
  });

  it("fails a running run without an accepted result and leaves a settled one alone", () => {
    expect(decideAfterExecFailure({ runStatus: "running", acceptedResultId: null })).toEqual({ kind: "fail" });
    expect(decideAfterExecFailure({ runStatus: "cancelled", acceptedResultId: "res" })).toEqual({ kind: "not_running", status: "cancelled" });
  });
});

describe("cutToBytes", () => {
  it("keeps short lines and cuts long ones without splitting a character", () => {
    expect(cutToBytes("hello", 10)).toBe("hello");
    const cut = cutToBytes("é".repeat(100), 40);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(40);
    expect(cut.endsWith(" [line cut]")).toBe(true);
    expect(cut).not.toContain("\uFFFD");
  });
});

describe("waitForLease", () => {
  const busy = () => new DomainError("conflict", "lease_busy", "busy");
  const never = new AbortController().signal;

  it("retries a busy lease until it is free", async () => {
    let calls = 0;
    let reported = 0;
    const result = await waitForLease(
      async () => {
        calls += 1;
        if (calls < 3) throw busy();
        return "lease";
      },
      { maxWaitMs: 5_000, signal: never, initialDelayMs: 1, onBusy: () => void (reported += 1) },
    );
    expect(result).toEqual({ kind: "acquired", value: "lease" });
    expect(calls).toBe(3);
    expect(reported).toBe(1);
  });

  it("gives up as busy after the wait", async () => {
    const result = await waitForLease(() => Promise.reject(busy()), { maxWaitMs: 5, signal: never, initialDelayMs: 1 });
    expect(result).toEqual({ kind: "busy" });
  });

  it("rethrows any other error at once", async () => {
    let calls = 0;
    const failing = () => {
      calls += 1;
      return Promise.reject(new DomainError("unavailable", "provider_plugin_unavailable", "gone"));
    };
    await expect(waitForLease(failing, { maxWaitMs: 5_000, signal: never })).rejects.toMatchObject({ code: "provider_plugin_unavailable" });
    expect(calls).toBe(1);
  });
});
