import { LIVE_EVENT_ENTITIES } from "@copyback/db/notify";
import { describe, expect, it } from "vitest";
import { LIVE_INVALIDATION, routerQueryKey, routersToRefresh } from "./live-invalidation";

describe("live invalidation table", () => {
  it("has an entry for every announced table", () => {
    for (const entity of LIVE_EVENT_ENTITIES)
      expect(LIVE_INVALIDATION[entity].length).toBeGreaterThan(0);
  });

  it("refreshes the issue views for messages and the run views for run events", () => {
    expect(routersToRefresh({ entity: "issue_messages" })).toEqual(["issues"]);
    expect(routersToRefresh({ entity: "run_events" })).toEqual(["runs"]);
    expect(routersToRefresh({ entity: "heartbeat_runs" })).toContain("issues");
  });

  it("keys by tRPC procedure path prefix", () => {
    expect(routerQueryKey("issues")).toEqual([["issues"]]);
  });
});
