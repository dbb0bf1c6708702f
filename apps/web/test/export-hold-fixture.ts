// The export-retry hold of core's test support (@copyback/core/test-support/export-hold: a real local
// sandbox stopped and retained with the agent's unexported file, the failed run with its accepted
// result, the coordinator terminal_failure with native_workspace_sync_out_retry_exhausted and the
// board-owned hold), placed under the console's own instance root: the export-only retry's REST
// route, tRPC mutation and the authorization matrix reach the sandbox through COPYBACK_HOME.
import { mkdtemp, realpath } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { PrismaClient } from "@copyback/db/client";
import { createDestroyedSource as createDestroyedUnder, type DestroyedSource } from "@copyback/core/test-support/destroyed-source";
import { createExportHold as createHoldUnder, type ExportHold, type ExportHoldPlace } from "@copyback/core/test-support/export-hold";

export { exportRetryReadmitted, type ExportHold, type ExportHoldPlace } from "@copyback/core/test-support/export-hold";
export type { DestroyedSource } from "@copyback/core/test-support/destroyed-source";

let sharedRoot: Promise<string> | undefined;

/** The console's instance root for these tests (COPYBACK_HOME is set to it once). */
export function exportHoldInstanceRoot(): Promise<string> {
  sharedRoot ??= (async () => {
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "copyback-web-export-hold-")));
    process.env.COPYBACK_HOME = root;
    return root;
  })();
  return sharedRoot;
}

/** R-RC-1: the export hold whose sandbox was discarded (a confirmed destruction receipt) with a stored attachment, under the console's root. */
export async function createDestroyedSource(db: PrismaClient, place: ExportHoldPlace): Promise<DestroyedSource> {
  return createDestroyedUnder(db, place, await exportHoldInstanceRoot());
}

export async function createExportHold(db: PrismaClient, place: ExportHoldPlace): Promise<ExportHold> {
  return createHoldUnder(db, place, await exportHoldInstanceRoot());
}
