// Reads the prepared workspace descriptor of a run back from its succeeded `workspace_prepare`
// operation (the latest one: a retried preparation supersedes earlier ones). Parsed with zod:
// a malformed descriptor grants nothing and is a typed failure, never a guess.
//
// R-FO-2: the descriptor is the merge baseline, not a proof of copyback (see copyback-proven.ts).
import { Prisma } from "@copyback/db/client";
import { DomainError } from "../errors";
import type { DbOrTx } from "../records/run-log";
import { preparedWorkspaceDescriptor, type PreparedWorkspaceDescriptor } from "../workspace/prepared-descriptor";
import type { CopybackBarrierKey } from "../records/copyback-proven";
import { DescriptorCache } from "./descriptor-cache";

const parsedLately = new DescriptorCache();

export async function loadPreparedWorkspace(db: DbOrTx, key: CopybackBarrierKey): Promise<PreparedWorkspaceDescriptor> {
  const runKey = `${key.companyId}:${key.runId}:${key.issueId}`;
  // Always read from the database; the metadata itself comes back only when the row is no longer
  // the version this process parsed (descriptor-cache.ts). The version is the row's id, xmin and
  // ctid: PostgreSQL writes every UPDATE as a new row version with its transaction's id as xmin
  // (the row-version token optimistic locking uses), so an equal version is unchanged content,
  // and any change, even to equal values, is read and parsed again. Hashing the content instead
  // would cost what it saves: turning the 10,000-entry jsonb into text is most of a full read.
  const rows = await db.$queryRaw<{ id: string; version: string; metadata: unknown }[]>(Prisma.sql`
    SELECT v.id, v.version, CASE WHEN v.version = ${parsedLately.versionOf(runKey) ?? ""} THEN NULL ELSE o.metadata END AS metadata
    FROM workspace_operations o
    CROSS JOIN LATERAL (SELECT o.id::text AS id, o.id::text || '/' || o.xmin::text || '/' || o.ctid::text AS version) v
    WHERE o.company_id = ${key.companyId}::uuid AND o.run_id = ${key.runId}::uuid AND o.issue_id = ${key.issueId}::uuid
      AND o.phase = 'workspace_prepare' AND o.status = 'succeeded'
    ORDER BY o.finished_at DESC, o.created_at DESC
    LIMIT 1`);
  const operation = rows[0];
  if (!operation) {
    throw new DomainError("conflict", "prepared_workspace_missing", "The run has no prepared workspace to finalize against.");
  }
  const remembered = operation.metadata === null ? parsedLately.get(runKey, operation.version) : undefined;
  if (remembered) return remembered;
  // Another load let go of the remembered descriptor meanwhile: read it in full, and do not
  // remember it (the version was read by the first statement, not with this content).
  const fetched = operation.metadata === null;
  const metadata = fetched ? await readMetadata(db, operation.id) : operation.metadata;
  const parsed = preparedWorkspaceDescriptor.safeParse(typeof metadata === "string" ? (JSON.parse(metadata) as unknown) : metadata);
  if (!parsed.success) {
    throw new DomainError("conflict", "prepared_workspace_invalid", "The run's prepared workspace descriptor is malformed.", {
      operationId: operation.id,
    });
  }
  if (!fetched) parsedLately.set(runKey, operation.version, parsed.data);
  return parsed.data;
}

async function readMetadata(db: DbOrTx, operationId: string): Promise<unknown> {
  const row = await db.workspaceOperation.findUniqueOrThrow({ where: { id: operationId }, select: { metadata: true } });
  return row.metadata;
}
