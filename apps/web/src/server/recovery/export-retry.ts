// The console's side of the export-only retry (R-EX-2): core's one service with this process's
// view of the providers. The retry resumes, probes and (if it must) stops the exact sandbox
// through the lease's recorded plugin (R-EX-6), so the web process needs the instance's
// providers: the built-in ones on COPYBACK_HOME (the launcher sets it; local sandboxes are
// directories under it). The re-admitted run is then committed by the worker's reconciler (its
// finalization sweep), not inside this request. The built-in fake provider keeps its sandboxes in
// the worker's memory: seen from here they are missing, and the retry answers 409
// sandbox_unavailable (rehearse with the fake provider in-process, or with the local provider).
import "server-only";
import type { PrismaClient } from "@copyback/db/client";
import { DomainError } from "@copyback/core/errors";
import { createDefaultRegistry, type ProviderRegistry } from "@copyback/core/providers";
import {
  retryWorkspaceExport,
  type RetryWorkspaceExportInput,
  type RetryWorkspaceExportResult,
} from "@copyback/core/recovery";
import { configuredHostId, instanceRootForReports } from "~/env";
import { resolveHostId } from "@copyback/core/deployment";

let cached: { root: string; registry: ProviderRegistry } | undefined;

/** The providers of this instance (one registry per instance root, made on first use). */
export function instanceProviders(): ProviderRegistry {
  const root = instanceRootForReports();
  if (!root) {
    throw new DomainError("unavailable", "instance_root_unknown", "COPYBACK_HOME is not set for the console, so the retained sandbox cannot be reached from here; use `copyback recovery retry-export` on the instance.");
  }
  if (cached?.root !== root) cached = { root, registry: createDefaultRegistry({ instanceRoot: root }) };
  return cached.registry;
}

export async function retryExportFromConsole(db: PrismaClient, input: RetryWorkspaceExportInput): Promise<RetryWorkspaceExportResult> {
  const registry = instanceProviders();
  // Issue 23: this console's host (instanceProviders refused an unknown instance root); another
  // host's retained sandbox or workspace is refused export_retry_on_other_host, nothing written.
  const configured = configuredHostId();
  const { hostId } = await resolveHostId({ instanceRoot: instanceRootForReports()!, ...(configured !== undefined ? { configured } : {}) });
  return retryWorkspaceExport({ db, registry, hostId }, input);
}
