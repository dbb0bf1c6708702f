// The console's side of "Continue from saved sources" (R-RC-2): core's one service with this
// instance's attachment store (issue_attachments.storage_path is relative to COPYBACK_HOME; the
// admission hashes the stored bytes, R-RC-3).
import "server-only";
import type { PrismaClient } from "@copyback/db/client";
import { DomainError } from "@copyback/core/errors";
import {
  reconstructWorkspace,
  type ReconstructWorkspaceInput,
  type ReconstructWorkspaceOutcome,
} from "@copyback/core/recovery";
import { instanceRootForReports } from "~/env";

export function reconstructFromConsole(db: PrismaClient, input: ReconstructWorkspaceInput): Promise<ReconstructWorkspaceOutcome> {
  const root = instanceRootForReports();
  if (!root) {
    throw new DomainError("unavailable", "instance_root_unknown", "COPYBACK_HOME is not set for the console, so the saved attachments cannot be read from here; use `copyback recovery reconstruct` on the instance.");
  }
  return reconstructWorkspace({ db, instanceRoot: root }, input);
}
