import { NextResponse } from "next/server";
import { createCaller } from "~/server/routers/_app";
import { createContext } from "~/server/trpc";

export const dynamic = "force-dynamic";

/** REST twin of health.get for probes (the launcher, CI, load balancers). */
export async function GET(req: Request) {
  try {
    const health = await createCaller(await createContext({ headers: req.headers })).health.get();
    return NextResponse.json(health);
  } catch (error) {
    return NextResponse.json(
      { status: "unavailable", code: "database_unreachable", message: error instanceof Error ? error.message : String(error) },
      { status: 503 },
    );
  }
}
