import { LIVE_EVENT_ENTITIES } from "@copyback/db/notify";
import { QueryClient } from "@tanstack/react-query";
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

describe("reconstruction intents (Continue from saved sources)", () => {
  it("R-RC-3 R-RC-5 R-UI-3: an intent's change marks the task's recovery queries stale, recovery.reconstructionOffer included", async () => {
    const client = new QueryClient();
    // tRPC's query keys: [[router, procedure], { input, type }].
    const input = { companyId: "c", issueId: "i" };
    const offerKey = [["recovery", "reconstructionOffer"], { input, type: "query" }];
    const noticeKey = [["recovery", "forIssue"], { input, type: "query" }];
    const runEventsKey = [["runs", "events"], { input, type: "query" }];
    for (const key of [offerKey, noticeKey, runEventsKey]) client.setQueryData(key, { seen: true });
    const routers = routersToRefresh({ entity: "reconstruction_intents" });
    expect(routers).toContain("recovery");
    // The board's chip (issues.list) derives from the same notice.
    expect(routers).toContain("issues");
    for (const router of routers) await client.invalidateQueries({ queryKey: routerQueryKey(router) });
    expect(client.getQueryState(offerKey)?.isInvalidated).toBe(true);
    expect(client.getQueryState(noticeKey)?.isInvalidated).toBe(true);
    expect(client.getQueryState(runEventsKey)?.isInvalidated).toBe(false);
  });
});

describe("task attachments (migration issue_attachments_live_notify)", () => {
  it("R-RC-3 R-UI-3: a new attachment marks the task's attachment list and the reconstruction offer stale, not the run pages", async () => {
    const client = new QueryClient();
    const input = { companyId: "c", issueId: "i" };
    const attachmentsKey = [["issues", "attachments"], { input, type: "query" }];
    const offerKey = [["recovery", "reconstructionOffer"], { input, type: "query" }];
    const runEventsKey = [["runs", "events"], { input, type: "query" }];
    for (const key of [attachmentsKey, offerKey, runEventsKey]) client.setQueryData(key, { seen: true });
    const routers = routersToRefresh({ entity: "issue_attachments" });
    for (const router of routers) await client.invalidateQueries({ queryKey: routerQueryKey(router) });
    expect(client.getQueryState(attachmentsKey)?.isInvalidated).toBe(true);
    expect(client.getQueryState(offerKey)?.isInvalidated).toBe(true);
    expect(client.getQueryState(runEventsKey)?.isInvalidated).toBe(false);
  });
});
