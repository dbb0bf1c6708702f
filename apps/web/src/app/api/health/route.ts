import { NextResponse } from "next/server";
import { TRPCError } from "@trpc/server";
import { isDomainError, messageOf } from "@copyback/core/errors";
import { domainErrorResponse } from "~/server/rest/responses";
import { createCaller } from "~/server/routers/_app";
import { createContext } from "~/server/trpc";

export const dynamic = "force-dynamic";

/** REST twin of health.get for probes (the launcher, CI, load balancers). */
export async function GET(req: Request) {
  try {
    const health = await createCaller(await createContext({ headers: req.headers })).health.get();
    return NextResponse.json(health);
  } catch (error) {
    // A refused credential (a revoked or unknown bearer key: 401 invalid_api_key, as health.get
    // answers it) is the caller's problem, not the database's: reporting it as unreachable would
    // take a healthy instance out of a load balancer whose probe carries a stale key.
    if (error instanceof TRPCError && isDomainError(error.cause))
      return domainErrorResponse(error.cause);
    return NextResponse.json(
      { status: "unavailable", code: "database_unreachable", message: messageOf(error) },
      { status: 503 },
    );
  }
}
