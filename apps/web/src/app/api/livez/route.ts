import { NextResponse } from "next/server";
import { livenessResponse, refusedCredential } from "~/server/health/probes";

export const dynamic = "force-dynamic";

/** Liveness: this process answers (src/server/health/probes.ts). */
export async function GET(req: Request) {
  const refused = await refusedCredential(req.headers);
  if (refused) return refused;
  const { status, body } = livenessResponse(process.uptime(), new Date());
  return NextResponse.json(body, { status });
}
