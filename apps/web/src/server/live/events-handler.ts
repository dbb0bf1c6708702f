// GET /api/events?companyId=<uuid>: a text/event-stream of one company's live changes.
// Server-sent events rather than a tRPC subscription: the stream is one-way and ids-only, the
// browser's EventSource reconnects by itself, scripts can read it with curl, and it needs no
// change to the shared tRPC client links. Errors before the stream starts are JSON
// `{ code, message }` with the statuses of the one mapping (server/errors.ts).
import type { PrismaClient } from "@copyback/db/client";
import type { Principal } from "@copyback/core/auth";
import { DomainError } from "@copyback/core/errors";
import { z } from "zod";
import { HTTP_STATUS } from "~/server/errors";
import { openEventStream, type EventStreamCloseReason } from "./event-stream";
import { liveAccessError } from "./live-access";
import type { LiveFeed } from "./live-feed";
import { SSE_HEADERS } from "./sse-format";

export interface LiveEventsDeps {
  db: Pick<PrismaClient, "company">;
  feed: LiveFeed;
  resolvePrincipal: (headers: Headers) => Promise<Principal>;
  heartbeatMs?: number;
  reauthorizeMs?: number;
  onClose?: (reason: EventStreamCloseReason) => void;
}

const query = z.object({
  companyId: z.uuid({ message: "companyId must be a company id (a UUID)." }),
});

export async function handleLiveEventsRequest(
  req: Request,
  deps: LiveEventsDeps,
): Promise<Response> {
  const parsed = query.safeParse({
    companyId: new URL(req.url).searchParams.get("companyId") ?? undefined,
  });
  if (!parsed.success) {
    return jsonError(
      HTTP_STATUS.invalid,
      "invalid_request",
      parsed.error.issues[0]?.message ?? "Invalid request.",
    );
  }
  const { companyId } = parsed.data;

  const accessError = async (): Promise<DomainError | null> =>
    liveAccessError(deps.db, await deps.resolvePrincipal(req.headers), companyId);
  let denied: DomainError | null;
  try {
    denied = await accessError();
  } catch (error) {
    if (error instanceof DomainError)
      return jsonError(HTTP_STATUS[error.kind], error.code, error.message);
    throw error;
  }
  if (denied) return jsonError(HTTP_STATUS[denied.kind], denied.code, denied.message);

  const stream = openEventStream({
    subscribe: (sink) => deps.feed.subscribe(companyId, sink),
    signal: req.signal,
    initialStatus: { listening: deps.feed.isListening() },
    heartbeatMs: deps.heartbeatMs,
    reauthorizeMs: deps.reauthorizeMs,
    // The principal is resolved again from the same cookie or key: a revoked key, an expired
    // session or a suspended membership ends the stream within one interval.
    stillAuthorized: async () => {
      try {
        return (await accessError()) === null;
      } catch (error) {
        // A revoked key or expired session is a denial; an unreachable database is not.
        if (error instanceof DomainError && error.kind !== "unavailable") return false;
        throw error;
      }
    },
    onClose: deps.onClose,
  });
  return new Response(stream, { status: 200, headers: SSE_HEADERS });
}

function jsonError(status: number, code: string, message: string): Response {
  return Response.json({ code, message }, { status, headers: { "Cache-Control": "no-store" } });
}
