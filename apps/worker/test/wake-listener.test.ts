import { describe, expect, it } from "vitest";
import type { LiveEvent } from "@copyback/db/notify";
import { wakesDispatch } from "../src/wake-listener";

const event = (entity: LiveEvent["entity"], op: LiveEvent["op"]): LiveEvent => ({
  companyId: "00000000-0000-4000-8000-000000000001",
  entity,
  id: "00000000-0000-4000-8000-000000000002",
  issueId: null,
  runId: null,
  op,
});

describe("which announced changes wake the dispatch loop", () => {
  it("a run inserted or updated wakes it; a deleted run, other tables and unreadable payloads do not", () => {
    expect(wakesDispatch(event("heartbeat_runs", "INSERT"))).toBe(true);
    expect(wakesDispatch(event("heartbeat_runs", "UPDATE"))).toBe(true);
    expect(wakesDispatch(event("heartbeat_runs", "DELETE"))).toBe(false);
    expect(wakesDispatch(event("run_events", "INSERT"))).toBe(false);
    expect(wakesDispatch(event("issues", "UPDATE"))).toBe(false);
    expect(wakesDispatch(null)).toBe(false);
  });
});
