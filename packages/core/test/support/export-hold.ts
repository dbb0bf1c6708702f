// Test support, not product code: an export-retry hold as the finalizer leaves it after its budget
// was spent (R-EX-1, R-EX-4), shared by core's CLI tests and the console's tests (REST route, tRPC
// mutation, authorization matrix; apps/web/test/export-hold-fixture.ts gives it the console's root): a real
// local sandbox (the built-in `builtin.local` plugin) under the instance root with the agent's
// unexported file, allocated, seeded-as-prepared and stopped through the provider itself (a real
// stop receipt); a failed native run with its accepted result and its claim; the coordinator
// terminal_failure with native_workspace_sync_out_retry_exhausted; the task blocked; and the
// board-owned hold opened by core's one writer (openExportRetryExhaustedAction).
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, realpath, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { takeManifest } from "../../src/copyback/manifest/index";
import { EXPORT_RETRY_EXHAUSTED_CODE } from "../../src/records/coordinator-phases";
import { LEASE_METADATA_KEYS, STOP_RECEIPT_SCHEMA } from "../../src/leases/lease-metadata";
import { createLocalProvider } from "../../src/providers/local/index";
import { openExportRetryExhaustedAction } from "../../src/records/actions";
import { publishRunResult } from "../../src/runs/publish-result";
import { RUN_RESULT_SCHEMA } from "../../src/records/result-document";
import { PREPARED_WORKSPACE_SCHEMA } from "../../src/workspace/prepared-descriptor";

export interface ExportHoldPlace {
  companyId: string;
  agentId: string;
  environmentId: string;
  lastActivityAt?: Date;
}

export interface ExportHold {
  issueId: string;
  runId: string;
  leaseId: string;
  actionId: string;
  providerLeaseId: string;
  instanceRoot: string;
}

/** A company with a `local` environment and an agent in it: where the holds of these fixtures live. */
export async function createExportHoldPlace(db: PrismaClient, name: string): Promise<ExportHoldPlace> {
  const company = await db.company.create({ data: { name: `${name} ${randomUUID()}`, issuePrefix: "ACME" } });
  const environment = await db.environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
  const agent = await db.agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  return { companyId: company.id, agentId: agent.id, environmentId: environment.id };
}

let issueNumber = 60_000;
/** A fresh instance root (the CLI's `--home`). */
export async function exportHoldInstanceRoot(): Promise<string> {
  return realpath(await mkdtemp(path.join(os.tmpdir(), "copyback-cli-export-hold-")));
}

export async function createExportHold(db: PrismaClient, place: ExportHoldPlace, instanceRoot: string): Promise<ExportHold> {
  const number = ++issueNumber;
  const hostPath = path.join(instanceRoot, "hosts", `ws-${number}`);
  await mkdir(hostPath, { recursive: true });
  const workspace = await db.executionWorkspace.create({ data: { companyId: place.companyId, name: `export-hold-${number}`, hostPath } });
  const issue = await db.issue.create({
    data: {
      companyId: place.companyId,
      number,
      identifier: `ACME-${number}`,
      title: `Export held ${number}`,
      // failRun blocked the task and bumped its status version (claim 1 -> 2).
      status: "blocked",
      statusVersion: 2,
      assigneeAgentId: place.agentId,
      executionWorkspaceId: workspace.id,
      ...(place.lastActivityAt ? { lastActivityAt: place.lastActivityAt } : {}),
    },
  });
  const claimedAt = new Date();
  const run = await db.heartbeatRun.create({
    data: {
      companyId: place.companyId,
      agentId: place.agentId,
      nativeIssueId: issue.id,
      runtimeMode: "native",
      status: "running",
      startedAt: claimedAt,
      runnerProfileJson: { nativeClaim: { issueId: issue.id, statusVersion: 1, claimedAt: claimedAt.toISOString() } },
    },
  });
  await db.nativeRunFinalization.create({ data: { companyId: place.companyId, runId: run.id, issueId: issue.id, phase: "observed" } });
  await db.issue.update({ where: { id: issue.id }, data: { executionRunId: run.id } });

  // The real sandbox: allocated, holding the agent's unexported edit, stopped by the provider.
  const leaseId = randomUUID();
  const local = createLocalProvider({ instanceRoot, isolation: "none" });
  const allocation = await local.acquire!({ companyId: place.companyId, environmentId: place.environmentId, leaseId, runId: run.id, config: {} });
  const providerLeaseId = allocation.identity.providerLeaseId;
  const identity = { providerLeaseId, fingerprint: allocation.identity.fingerprint };
  await writeFile(path.join(instanceRoot, "sandboxes", providerLeaseId, "workspace", "report.txt"), "unexported work\n");
  const handle = { leaseId, pluginId: "builtin.local", providerLeaseId };
  const receipt = await local.stopLease!(handle, { requestId: randomUUID() });
  await db.environmentLease.create({
    data: {
      id: leaseId,
      companyId: place.companyId,
      environmentId: place.environmentId,
      executionWorkspaceId: workspace.id,
      runId: run.id,
      issueId: issue.id,
      provider: "local",
      pluginId: "builtin.local",
      providerLeaseId,
      leasePolicy: "reuse_by_environment",
      status: "released",
      releasedAt: new Date(),
      metadata: {
        [LEASE_METADATA_KEYS.identity]: identity,
        [LEASE_METADATA_KEYS.isolated]: false,
        [LEASE_METADATA_KEYS.stopReceipt]: {
          schema: STOP_RECEIPT_SCHEMA,
          method: receipt.method,
          requestId: receipt.requestId,
          pluginId: receipt.pluginId,
          providerLeaseId: receipt.providerLeaseId,
          stoppedAt: receipt.stoppedAt,
        },
      },
    },
  });
  // The prepared workspace descriptor (an empty host at preparation).
  await db.workspaceOperation.create({
    data: {
      companyId: place.companyId,
      runId: run.id,
      issueId: issue.id,
      phase: "workspace_prepare",
      status: "succeeded",
      finishedAt: new Date(),
      metadata: {
        schema: PREPARED_WORKSPACE_SCHEMA,
        executionWorkspaceId: workspace.id,
        hostPath,
        excludedPaths: [],
        baseline: JSON.parse(JSON.stringify(await takeManifest(hostPath))),
        leaseId,
        seed: identity,
        preparedAt: new Date().toISOString(),
      },
    },
  });
  const published = await publishRunResult(db, {
    runId: run.id,
    agentId: place.agentId,
    dedupeKey: "finish",
    document: { schema: RUN_RESULT_SCHEMA, outcome: "done", summary: "Did the work." },
    source: "finish_api",
  });
  if (published.kind !== "accepted") throw new Error("fixture: result not accepted");

  // What holdExportFailure (finalization/held-export-failure.ts) leaves (R-EX-1, R-EX-4), in one transaction.
  const actionId = await withTransaction(db, async (tx) => {
    await tx.nativeRunFinalization.update({
      where: { runId: run.id },
      data: { phase: "terminal_failure", attempt: 3, failureCode: EXPORT_RETRY_EXHAUSTED_CODE, failureDetail: { attempts: 3, lastFailureCode: "provider_export_failed" } },
    });
    await tx.heartbeatRun.update({
      where: { id: run.id },
      data: { status: "failed", errorCode: EXPORT_RETRY_EXHAUSTED_CODE, errorMessage: "Copying the sandbox's files back failed 3 times.", finishedAt: new Date(), nativePhase: "terminal_failure" },
    });
    const opened = await openExportRetryExhaustedAction(tx, {
      companyId: place.companyId,
      issueId: issue.id,
      runId: run.id,
      resultId: published.resultId,
      leaseId,
      providerLeaseId,
      pluginId: "builtin.local",
      attempts: 3,
      lastFailureCode: "provider_export_failed",
    });
    return opened.actionId;
  });
  return { issueId: issue.id, runId: run.id, leaseId, actionId, providerLeaseId, instanceRoot };
}

/** Whether the hold's run was re-admitted (the retry took effect). */
export async function exportRetryReadmitted(db: PrismaClient, runId: string): Promise<boolean> {
  const coordinator = await db.nativeRunFinalization.findUniqueOrThrow({ where: { runId }, select: { phase: true } });
  return coordinator.phase !== "terminal_failure";
}
