import { describe, expect, it } from "vitest";
import { retentionReasons } from "./retention-reasons";

const none = { actions: [], stopIntent: false, reuseRefused: false, runStatus: "succeeded", runCommitted: true, finalizationUnsettled: false };

describe("retentionReasons", () => {
  it("names every open action, then the intent, the refused reuse and an uncommitted run", () => {
    const reasons = retentionReasons({ actions: [{ id: "a1", cause: "export_retry_exhausted" }], stopIntent: true, reuseRefused: true, runStatus: "failed", runCommitted: false, finalizationUnsettled: false });
    expect(reasons.map((r) => r.kind)).toEqual(["recovery_action", "stop_intent", "reuse_refused", "run_not_committed"]);
    expect(reasons[0]).toMatchObject({ actionId: "a1", cause: "export_retry_exhausted" });
    expect(reasons[3]).toMatchObject({ runStatus: "failed" });
  });

  it("a committed run, or one still running, is no reason by itself", () => {
    expect(retentionReasons(none)).toEqual([]);
    expect(retentionReasons({ ...none, runStatus: "failed", runCommitted: true })).toEqual([]);
    expect(retentionReasons({ ...none, runStatus: "running", runCommitted: false })).toEqual([]);
    expect(retentionReasons({ ...none, runStatus: null, runCommitted: false })).toEqual([]);
  });

  it("R-ORP-3: a running run whose accepted result is not copied back yet keeps its sandbox, and says so", () => {
    const reasons = retentionReasons({ ...none, runStatus: "running", runCommitted: false, finalizationUnsettled: true });
    expect(reasons).toEqual([{ kind: "finalization_unsettled", text: expect.stringContaining("not copied back yet") }]);
  });

  it("R-RC-1: an unfinished Discard comes first and says the files may be gone (with its last failure), before the actions it acknowledged", () => {
    const reasons = retentionReasons({ ...none, actions: [{ id: "a1", cause: "file_recovery" }], discarding: { requestId: "r-1", lastFailureCode: "provider_plugin_unavailable" } });
    expect(reasons.map((r) => r.kind)).toEqual(["discarding", "recovery_action"]);
    expect(reasons[0]).toMatchObject({ requestId: "r-1", text: expect.stringContaining("may already be destroyed") });
    expect(reasons[0]!.text).toContain("provider_plugin_unavailable");
    expect(retentionReasons({ ...none, discarding: { requestId: "r-1", lastFailureCode: null } })[0]!.text).not.toContain("did not finish");
    expect(retentionReasons({ ...none, discarding: null })).toEqual([]);
  });
});
