// Test support, not product code: the source of a reconstruction (R-RC-1) as the product leaves
// it: the export-retry hold of a failed run (export-hold.ts: a real local sandbox, accepted result,
// prepared descriptor, terminal_failure), whose sandbox a board operator then discarded through
// the real Discard service (the confirmed destruction receipt on the lease, the files given up on
// the hold), and surviving attachments of the task with real bytes in the attachment store
// (issue_attachments.storage_path under the instance root). Shared by core's service tests and
// the console's route tests.
import { createHash, randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { PrismaClient } from "@copyback/db/client";
import { createDefaultRegistry } from "../../src/providers/index";
import type { ReconstructWorkspaceInput } from "../../src/recovery/operator/reconstruct-workspace";
import { discardRetainedSandbox } from "../../src/sandboxes/discard-sandbox";
import { createExportHold, type ExportHold, type ExportHoldPlace } from "./export-hold";

export interface DestroyedSource extends ExportHold {
  attachmentIds: string[];
}

/** One attachment of the task with `content` stored under the instance root. */
export async function createStoredAttachment(db: PrismaClient, key: { companyId: string; issueId: string }, instanceRoot: string, fileName: string, content: string): Promise<string> {
  const id = randomUUID();
  const storagePath = path.join("attachments", id, fileName);
  await mkdir(path.join(instanceRoot, "attachments", id), { recursive: true });
  await writeFile(path.join(instanceRoot, storagePath), content);
  const bytes = Buffer.from(content);
  await db.issueAttachment.create({
    data: { id, companyId: key.companyId, issueId: key.issueId, fileName, contentType: "text/markdown", sizeBytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex"), storagePath },
  });
  return id;
}

/** The export hold, retained (not destroyed): what reconstruction must refuse (R-RC-1). */
export async function createRetainedSource(db: PrismaClient, place: ExportHoldPlace, instanceRoot: string): Promise<DestroyedSource> {
  const hold = await createExportHold(db, place, instanceRoot);
  const attachmentIds = [await createStoredAttachment(db, { companyId: place.companyId, issueId: hold.issueId }, instanceRoot, "notes.md", "# What the agent did\n- edited README\n")];
  return { ...hold, attachmentIds };
}

/** The export hold whose sandbox was discarded: a confirmed destruction receipt on the exact lease. */
export async function createDestroyedSource(db: PrismaClient, place: ExportHoldPlace, instanceRoot: string): Promise<DestroyedSource> {
  const source = await createRetainedSource(db, place, instanceRoot);
  await discardRetainedSandbox(
    { db, registry: createDefaultRegistry({ instanceRoot }) },
    { companyId: place.companyId, leaseId: source.leaseId, providerLeaseId: source.providerLeaseId, acknowledgedActionIds: [source.actionId], reason: "the sandbox is no longer needed", actor: { type: "local_board", id: null } },
  );
  return source;
}

/**
 * A "Continue from saved sources" request for `source` as the console sends it (R-RC-2): its hold,
 * run, lease and attachments, a description, one observed outcome, the task's current status
 * version and a fresh request id; `overrides` change any part.
 */
export async function reconstructionRequestFor(
  db: PrismaClient,
  companyId: string,
  source: DestroyedSource,
  overrides: Partial<ReconstructWorkspaceInput> = {},
): Promise<ReconstructWorkspaceInput> {
  const issue = await db.issue.findUniqueOrThrow({ where: { id: source.issueId } });
  return {
    companyId,
    issueId: source.issueId,
    actor: { type: "user", id: null },
    actionId: source.actionId,
    sourceRunId: source.runId,
    leaseId: source.leaseId,
    attachmentIds: source.attachmentIds,
    description: "Rebuild the README changes described in notes.md",
    externalActionOutcomes: [{ action: "opened a pull request", outcome: "not_performed" }],
    sourceStatusVersion: issue.statusVersion,
    requestId: `req-${randomUUID()}`,
    ...overrides,
  };
}
