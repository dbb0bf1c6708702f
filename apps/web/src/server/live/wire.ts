// What travels from /api/events to the browser. Shared by the server and the browser bundle:
// nothing here may import server code (type-only imports are erased).
import type { LiveEventEntity } from "@copyback/db/notify";

export const LIVE_EVENTS_PATH = "/api/events";

/** Server-sent event names. */
export const SSE_EVENT = {
  /** First event of every stream: the subscription is in place. */
  ready: "ready",
  /** A row changed; data is a `LiveChange`. */
  change: "change",
  /** Changes may have been missed (the server's LISTEN connection was down): re-read everything. */
  resync: "resync",
  /** The server's own LISTEN connection went down or came back; data is `LiveServerStatus`. */
  status: "status",
  /** The subscriber lost access to the company; the stream ends and must not be reopened. */
  denied: "denied",
} as const;

export type LiveOp = "INSERT" | "UPDATE" | "DELETE";

/** A change as the browser sees it: ids only (the stream is already scoped to one company). */
export interface LiveChange {
  entity: LiveEventEntity;
  id: string;
  issueId: string | null;
  runId: string | null;
  op: LiveOp;
}

export interface LiveServerStatus {
  /** True while the server hears the database; false while its LISTEN connection reconnects. */
  listening: boolean;
}

export function liveEventsUrl(companyId: string): string {
  return `${LIVE_EVENTS_PATH}?companyId=${encodeURIComponent(companyId)}`;
}

const OPS: readonly string[] = ["INSERT", "UPDATE", "DELETE"];

/** The browser's check of a `change` event's data; null for anything unexpected. */
export function parseLiveChange(data: string): LiveChange | null {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  const idOrNull = (x: unknown) => x === null || typeof x === "string";
  if (
    typeof v.entity !== "string" ||
    typeof v.id !== "string" ||
    !idOrNull(v.issueId) ||
    !idOrNull(v.runId)
  )
    return null;
  if (typeof v.op !== "string" || !OPS.includes(v.op)) return null;
  return {
    entity: v.entity as LiveEventEntity,
    id: v.id,
    issueId: v.issueId as string | null,
    runId: v.runId as string | null,
    op: v.op as LiveOp,
  };
}
