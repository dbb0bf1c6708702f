// prepareRunWorkspace against a real PostgreSQL and real directories: the descriptor (baseline
// manifest and seed identity from one locked view), the seeded sandbox, exclusions, failures
// recorded on the operation, and refusals that write nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { takeManifest } from "../../src/copyback/manifest/take-manifest";
import { loadPreparedWorkspace } from "../../src/finalization/workspace-descriptor";
import { copybackProven } from "../../src/records/copyback-proven";
import { prepareRunWorkspace } from "../../src/workspace/prepare-run-workspace";
import { PREPARED_WORKSPACE_SCHEMA } from "../../src/workspace/prepared-descriptor";
import type { MergeLockProvider } from "../../src/copyback/merge/types";
import { DirProvider } from "./dir-provider";
import { buildWorld, claimedRun, readTree, writeTree, type World } from "./finalization-fixture";

const db = useTestDatabase();
let world: World;

beforeAll(async () => {
  world = await buildWorld(db.prisma(), db.url(), { excludedPaths: ["node_modules", ".git/objects"] });
  await writeTree(world.hostPath, {
    "src/main.ts": "export {};",
    "README.md": "# hi",
    "link": "->README.md",
    "node_modules/dep/index.js": "excluded",
    ".git/objects/ab": "excluded",
    ".git/HEAD": "ref",
  });
});

afterAll(async () => {
  await world?.cleanup();
});

const operations = (runId: string) => db.prisma().workspaceOperation.findMany({ where: { runId }, orderBy: { createdAt: "asc" } });

describe("prepareRunWorkspace", () => {
  it("seeds the sandbox and stores the descriptor (baseline of the same locked view, seed identity) on a succeeded workspace_prepare", async () => {
    const run = await claimedRun(world);
    const locked: string[] = [];
    const locks: MergeLockProvider = {
      withLock: (target, fn) => world.locks.withLock(target, async (lease) => {
        locked.push(lease.target);
        return fn(lease);
      }),
    };
    const { operationId, descriptor } = await prepareRunWorkspace({ db: db.prisma(), locks }, { runId: run.runId, lease: run.handle, plugin: world.provider });

    expect(locked).toEqual([world.hostPath]);
    expect(await readTree(run.sandbox)).toEqual({
      ".git": null,
      ".git/HEAD": "ref",
      "README.md": "# hi",
      link: "->README.md",
      src: null,
      "src/main.ts": "export {};",
    });
    const manifest = await takeManifest(world.hostPath, { exclude: ["node_modules", ".git/objects"] });
    expect(descriptor).toMatchObject({
      schema: PREPARED_WORKSPACE_SCHEMA,
      executionWorkspaceId: world.workspaceId,
      hostPath: world.hostPath,
      excludedPaths: ["node_modules", ".git/objects"],
      leaseId: run.handle.leaseId,
      seed: { providerLeaseId: run.handle.providerLeaseId, fingerprint: `fp-${run.handle.providerLeaseId}` },
    });
    expect(descriptor.baseline).toEqual(manifest);

    const ops = await operations(run.runId);
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({ id: operationId, phase: "workspace_prepare", status: "succeeded", errorCode: null });
    expect(ops[0]!.finishedAt).not.toBeNull();
    // The stored metadata reads back as the same descriptor.
    expect(await loadPreparedWorkspace(db.prisma(), { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toEqual(descriptor);
    const event = await db.prisma().runEvent.findFirstOrThrow({ where: { runId: run.runId, code: "workspace.prepared" } });
    expect(event).toMatchObject({ level: "info", payload: { operationId, files: 3, symlinks: 1 } });
  });

  it("R-FO-2 a prepared workspace is not an export receipt: the barrier is not proven", async () => {
    const run = await claimedRun(world);
    await prepareRunWorkspace({ db: db.prisma(), locks: world.locks }, { runId: run.runId, lease: run.handle, plugin: world.provider });
    expect(await copybackProven(db.prisma(), { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toBe(false);
  });

  it("a seeding failure marks the operation failed with its code and rethrows; no descriptor is readable", async () => {
    const run = await claimedRun(world);
    const failing = Object.assign(Object.create(world.provider) as DirProvider, {
      seedWorkspace: async () => {
        throw Object.assign(new Error("sandbox gone"), { code: "provider_seed_failed" });
      },
    });
    await expect(
      prepareRunWorkspace({ db: db.prisma(), locks: world.locks }, { runId: run.runId, lease: run.handle, plugin: failing }),
    ).rejects.toThrow("sandbox gone");
    const ops = await operations(run.runId);
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatchObject({ phase: "workspace_prepare", status: "failed", errorCode: "provider_seed_failed" });
    await expect(loadPreparedWorkspace(db.prisma(), { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).rejects.toMatchObject({
      code: "prepared_workspace_missing",
    });
    expect(await db.prisma().runEvent.count({ where: { runId: run.runId, code: "workspace.prepare_failed", level: "error" } })).toBe(1);
  });

  it("R-EX-6 refuses a plugin other than the one pinned on the lease, and a plugin that cannot seed, writing nothing", async () => {
    const run = await claimedRun(world);
    const other = await DirProvider.create("test.other");
    const cannotSeed = await DirProvider.create("test.dir", ["exportWorkspace", "inspect"]);
    try {
      await expect(
        prepareRunWorkspace({ db: db.prisma(), locks: world.locks }, { runId: run.runId, lease: run.handle, plugin: other }),
      ).rejects.toMatchObject({ code: "provider_plugin_mismatch" });
      await expect(
        prepareRunWorkspace({ db: db.prisma(), locks: world.locks }, { runId: run.runId, lease: run.handle, plugin: cannotSeed }),
      ).rejects.toMatchObject({ code: "provider_capability_missing" });
      await expect(
        prepareRunWorkspace({ db: db.prisma(), locks: world.locks }, { runId: "00000000-0000-4000-8000-000000000000", lease: run.handle, plugin: world.provider }),
      ).rejects.toMatchObject({ kind: "not_found" });
    } finally {
      await other.dispose();
      await cannotSeed.dispose();
    }
    expect(await operations(run.runId)).toEqual([]);
  });
});
