// The last time each environment's credentials refused a dispatch (issue 21): the run event
// `environment.credentials_refused` that execute-run.ts writes, with the code, the variable's NAME
// and the environment's id in its payload (never a key). The Environments page and
// `copyback environment list` show it beside the variable's current state, so a rejected key (which
// only Daytona can tell) is visible where the environment is configured, not only on the run.
import { Prisma, type PrismaClient } from "@copyback/db/client";

export const CREDENTIALS_REFUSED_EVENT = "environment.credentials_refused";

export interface CredentialRefusal {
  environmentId: string;
  runId: string;
  code: string;
  variable: string | null;
  message: string;
  at: Date;
}

// Read through the refused runs (heartbeat_runs.error_code), then their events by the
// (run_id, created_at) index: run_events has no index on its code or payload.
/** The newest refusal per environment among `environmentIds` (of one company when companyId is given). */
export async function lastCredentialRefusals(db: Pick<PrismaClient, "$queryRaw">, environmentIds: readonly string[], companyId?: string): Promise<Map<string, CredentialRefusal>> {
  if (environmentIds.length === 0) return new Map();
  const rows = await db.$queryRaw<Array<{ environmentId: string; runId: string; code: string | null; variable: string | null; message: string; at: Date }>>(Prisma.sql`
    SELECT DISTINCT ON (e.payload->>'environmentId')
           e.payload->>'environmentId' AS "environmentId", e.run_id AS "runId", e.payload->>'code' AS code,
           e.payload->>'variable' AS variable, e.message, e.created_at AS at
    FROM heartbeat_runs r
    JOIN run_events e ON e.run_id = r.id
    WHERE r.error_code IN ('provider_credentials_missing', 'provider_credentials_rejected')
      AND e.code = ${CREDENTIALS_REFUSED_EVENT}
      AND e.payload->>'environmentId' IN (${Prisma.join(environmentIds.map(String))})
      ${companyId === undefined ? Prisma.empty : Prisma.sql`AND r.company_id = ${companyId}::uuid`}
    ORDER BY e.payload->>'environmentId', e.created_at DESC, e.id DESC`);
  return new Map(rows.map((r) => [r.environmentId, { environmentId: r.environmentId, runId: r.runId, code: r.code ?? "provider_credentials_rejected", variable: r.variable, message: r.message, at: r.at }]));
}
