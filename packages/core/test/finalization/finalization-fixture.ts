// A company whose agent runs on a directory-backed test provider, a real host workspace
// directory, and a run that is claimed, prepared (sandbox seeded from the host) and has an
// accepted result: the state finalizeRun starts from. Built with the real run services.
import { randomUUID } from "node:crypto";
import { mkdtemp, mkdir, readdir, readFile, readlink, lstat, rm, writeFile, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PrismaClient } from "@copyback/db/client";
import { afterAll, beforeAll } from "vitest";
import { DirectoryMergeLocks } from "../../src/copyback/locks/directory-merge-lock";
import type { FinalizeRunDeps } from "../../src/finalization/finalize-run";
import type { ProcessIdentity } from "../../src/process/process-identity";
import type { EnvironmentProvider, LeaseHandle } from "../../src/providers/types";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { publishRunResult } from "../../src/runs/publish-result";
import { RUN_RESULT_SCHEMA } from "../../src/records/result-document";
import { wakeAgent } from "../../src/runs/wake-agent";
import { prepareRunWorkspace } from "../../src/workspace/prepare-run-workspace";
import { DirProvider } from "./dir-provider";

export const CONTROLLER: ProcessIdentity = { pid: process.pid, startTime: "424242", bootId: "boot-test", host: "test-host" };

/** A tree as { path: content } (files), { path: "->target" } (symlinks), { path: null } (directories). */
export type Tree = Record<string, string | null>;

export async function writeTree(root: string, tree: Tree): Promise<void> {
  for (const [path, content] of Object.entries(tree)) {
    const abs = join(root, path);
    if (content === null) await mkdir(abs, { recursive: true });
    else {
      await mkdir(join(abs, ".."), { recursive: true });
      if (content.startsWith("->")) await symlink(content.slice(2), abs);
      else await writeFile(abs, content);
    }
  }
}

export async function readTree(root: string, rel = ""): Promise<Tree> {
  const out: Tree = {};
  for (const name of (await readdir(join(root, rel))).sort()) {
    const path = rel ? `${rel}/${name}` : name;
    const stats = await lstat(join(root, path));
    if (stats.isSymbolicLink()) out[path] = `->${await readlink(join(root, path))}`;
    else if (stats.isDirectory()) Object.assign(out, { [path]: null }, await readTree(root, path));
    else out[path] = await readFile(join(root, path), "utf8");
  }
  return out;
}

export interface World {
  db: PrismaClient;
  companyId: string;
  agentId: string;
  environmentId: string;
  workspaceId: string;
  hostPath: string;
  instanceRoot: string;
  provider: DirProvider;
  locks: DirectoryMergeLocks;
  deps(): FinalizeRunDeps;
  cleanup(): Promise<void>;
}

/**
 * One world for a test file: built before its tests on the file's test database, cleaned up after
 * them; `bind` receives it (the file keeps its own `let world: World`).
 */
export function useWorld(db: { prisma(): PrismaClient; url(): string }, bind: (world: World) => void): void {
  let built: World | undefined;
  beforeAll(async () => {
    built = await buildWorld(db.prisma(), db.url());
    bind(built);
  });
  afterAll(async () => {
    await built?.cleanup();
  });
}

export async function buildWorld(db: PrismaClient, databaseUrl: string, opts: { excludedPaths?: string[] } = {}): Promise<World> {
  const base = await mkdtemp(join(tmpdir(), "copyback-finalize-"));
  const hostPath = join(base, "host");
  const instanceRoot = join(base, "instance");
  await mkdir(hostPath);
  await mkdir(instanceRoot, { mode: 0o700 });
  const provider = await DirProvider.create();
  const company = await db.company.create({ data: { name: `Acme ${randomUUID()}`, issuePrefix: "ACME" } });
  const environment = await db.environment.create({
    data: { companyId: company.id, name: "Dir", provider: "fake", pluginId: provider.pluginId },
  });
  const workspace = await db.executionWorkspace.create({
    data: { companyId: company.id, name: "main", hostPath, excludedPaths: opts.excludedPaths ?? [] },
  });
  const agent = await db.agent.create({
    data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id },
  });
  const locks = new DirectoryMergeLocks({ instanceRoot, timeoutMs: 5_000 });
  const registry = {
    forLease(lease: { pluginId: string }): EnvironmentProvider {
      if (lease.pluginId !== provider.pluginId) throw new Error(`unexpected plugin ${lease.pluginId}`);
      return provider;
    },
  };
  return {
    db,
    companyId: company.id,
    agentId: agent.id,
    environmentId: environment.id,
    workspaceId: workspace.id,
    hostPath,
    instanceRoot,
    provider,
    locks,
    deps: () => ({ db, registry, instanceRoot, locks, databaseUrl, controller: CONTROLLER, retry: { backoffMs: 0 } }),
    cleanup: async () => {
      await provider.dispose();
      await rm(base, { recursive: true, force: true });
    },
  };
}

let issueNumber = 0;

/** A claimed run with a lease on the test provider (not yet prepared). */
export async function claimedRun(world: World) {
  const { db } = world;
  issueNumber += 1;
  const issue = await db.issue.create({
    data: {
      companyId: world.companyId,
      number: issueNumber,
      identifier: `ACME-${issueNumber}`,
      title: `Task ${issueNumber}`,
      status: "todo",
      assigneeAgentId: world.agentId,
      executionWorkspaceId: world.workspaceId,
    },
  });
  const { runId } = await wakeAgent(db, { companyId: world.companyId, issueId: issue.id, actor: { type: "system", id: null } });
  const claimed = await claimQueuedRuns(db, { limit: 100, controller: CONTROLLER });
  if (!claimed.some((run) => run.runId === runId)) throw new Error("fixture: the run was not claimed");
  const providerLeaseId = `sbx-${randomUUID()}`;
  const lease = await db.environmentLease.create({
    data: {
      companyId: world.companyId,
      environmentId: world.environmentId,
      executionWorkspaceId: world.workspaceId,
      runId,
      issueId: issue.id,
      provider: "fake",
      pluginId: world.provider.pluginId,
      providerLeaseId,
      // Not ephemeral: these tests keep many leases of one workspace active (nothing releases them here).
      leasePolicy: "retain_on_failure",
    },
  });
  const handle: LeaseHandle = { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId };
  return { runId, issueId: issue.id, handle, sandbox: world.provider.sandbox(handle) };
}

export async function acceptResult(world: World, runId: string, outcome: "in_review" | "done" = "in_review"): Promise<string> {
  const published = await publishRunResult(world.db, {
    runId,
    agentId: world.agentId,
    dedupeKey: "finish",
    document: { schema: RUN_RESULT_SCHEMA, outcome, summary: "Did the work." },
    source: "finish_api",
  });
  if (published.kind !== "accepted") throw new Error("fixture: result not accepted");
  return published.resultId;
}

/** Claimed, prepared (sandbox seeded from the host) and with an accepted result. */
export async function preparedRun(world: World, outcome: "in_review" | "done" = "in_review") {
  const run = await claimedRun(world);
  const prepared = await prepareRunWorkspace({ db: world.db, locks: world.locks }, { runId: run.runId, lease: run.handle, plugin: world.provider });
  const resultId = await acceptResult(world, run.runId, outcome);
  return { ...run, prepared, resultId };
}
