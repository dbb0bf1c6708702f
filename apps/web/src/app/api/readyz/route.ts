import { NextResponse } from "next/server";
import { probeQuery } from "@copyback/db/client";
import { db } from "~/server/db";
import { readinessResponse, refusedCredential } from "~/server/health/probes";

export const dynamic = "force-dynamic";

/** Readiness: this process can reach its database now (src/server/health/probes.ts). */
export async function GET(req: Request) {
  const refused = await refusedCredential(req.headers);
  if (refused) return refused;
  const database = await probeQuery(() => db().$queryRaw`SELECT 1`, 2_000);
  const { status, body } = readinessResponse(database, new Date());
  return NextResponse.json(body, { status });
}
