// Issue 21: the Environments page reads a Daytona environment's newest sandbox live through the
// lease's plugin (inspect-sandbox.ts): Daytona's own state and the auto-delete policy from its
// record, against the Daytona emulator (core's test support) and real PostgreSQL. A rejected key
// is shown by its code, never the key; the page never hangs on the provider.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { createDaytonaProvider } from "@copyback/core/providers";
import { startDaytonaEmulator, type DaytonaEmulator } from "@copyback/core/test-support/daytona/emulator";
import { buildAuthWorld, callerFor, configureWebApp, disconnectWebApp, sessionPrincipal, type AuthWorld } from "./auth-fixture";

const testDb = useTestDatabase();
const VARIABLE = "DAYTONA_ENV_LIVE_TEST_KEY";
let world: AuthWorld;
let emulator: DaytonaEmulator;
let dir = "";
let previousHome: string | undefined;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "copyback-env-live-"));
  previousHome = process.env.COPYBACK_HOME;
  process.env.COPYBACK_HOME = dir;
  emulator = await startDaytonaEmulator({ root: path.join(dir, "emulator") });
  process.env[VARIABLE] = emulator.apiKey;
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(testDb.prisma());
});
afterAll(async () => {
  delete process.env[VARIABLE];
  if (previousHome === undefined) delete process.env.COPYBACK_HOME;
  else process.env.COPYBACK_HOME = previousHome;
  await emulator?.close();
  await disconnectWebApp();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("environments.list, Daytona live read (emulator)", () => {
  it("issue 21: the Environments and Retained sandboxes pages show Daytona's state and the auto-delete policy read back from its record; a rejected key is shown by its code", { timeout: 30_000 }, async () => {
    const prisma = testDb.prisma();
    const companyId = world.companyA.id;
    const config = { apiUrl: emulator.apiUrl, apiKeyEnv: VARIABLE };
    const environment = await prisma.environment.create({ data: { companyId, name: "daytona-live", provider: "daytona", pluginId: "builtin.daytona", config } });
    const run = await prisma.heartbeatRun.findFirstOrThrow({ where: { companyId } });
    const lease = await prisma.environmentLease.create({ data: { companyId, environmentId: environment.id, runId: run.id, provider: "daytona", pluginId: "builtin.daytona", leasePolicy: "retain_on_failure", status: "active" } });
    // The sandbox as the worker's plugin makes it for that lease.
    const plugin = createDaytonaProvider({ instanceRoot: dir, variables: (name) => process.env[name] });
    const allocation = await plugin.acquire!({ companyId, environmentId: environment.id, leaseId: lease.id, runId: run.id, config });
    await prisma.environmentLease.update({ where: { id: lease.id }, data: { providerLeaseId: allocation.identity.providerLeaseId } });

    const manager = callerFor(prisma, sessionPrincipal(world.users.manager.id, [{ companyId, role: "runtime_manager" }]));
    const read = (await manager.environments.list({ companyId })).items.find((i) => i.id === environment.id)!;
    expect(read.sandbox).toMatchObject({ leaseId: lease.id, status: "active", dashboardUrl: null, live: { kind: "read", state: "running", providerState: "started", autoDelete: "disabled" } });

    // Held for recovery, it is on the Retained sandboxes page, read live there too.
    const issue = await prisma.issue.findFirstOrThrow({ where: { companyId } });
    await prisma.issueRecoveryAction.create({ data: { companyId, issueId: issue.id, runId: run.id, leaseId: lease.id, cause: "legacy_workspace_copyback_failed", fingerprint: `live-${lease.id}`, ownerType: "board" } });
    const retained = (await manager.sandboxes.listRetained({ companyId })).items.find((i) => i.leaseId === lease.id)!;
    expect(retained.remote).toMatchObject({ kind: "read", providerState: "started", autoDelete: "disabled" });

    process.env[VARIABLE] = "dtn_wrong_live_key_77";
    try {
      const refused = await manager.environments.list({ companyId });
      const item = refused.items.find((i) => i.id === environment.id)!;
      expect(item.sandbox?.live).toMatchObject({ kind: "not_read", code: "provider_credentials_rejected" });
      expect(JSON.stringify(refused)).not.toContain("dtn_wrong_live_key_77");
      const retainedRefused = (await manager.sandboxes.listRetained({ companyId })).items.find((i) => i.leaseId === lease.id)!;
      expect(retainedRefused.remote).toMatchObject({ kind: "not_read", code: "provider_credentials_rejected" });
    } finally {
      process.env[VARIABLE] = emulator.apiKey;
    }
  });
});
