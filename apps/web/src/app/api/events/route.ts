import { resolvePrincipal } from "~/server/auth/resolve-principal";
import { db } from "~/server/db";
import { handleLiveEventsRequest } from "~/server/live/events-handler";
import { liveFeed } from "~/server/live/process-feed";

export const dynamic = "force-dynamic";
// A long-lived stream on the process's LISTEN connection: Node.js runtime only.
export const runtime = "nodejs";

/** Server-sent live changes of one company (`?companyId=`); see server/live/events-handler.ts. */
export function GET(req: Request): Promise<Response> {
  return handleLiveEventsRequest(req, { db: db(), feed: liveFeed(), resolvePrincipal });
}
