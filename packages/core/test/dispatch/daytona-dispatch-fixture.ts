// The product's run path on Daytona, against the emulator: a DispatchWorld (real PostgreSQL, real
// host workspaces, executeRun as the worker drives it) whose registry also holds the real Daytona
// plugin, pointed by an environment's config at an emulator this file starts (test/support/daytona).
// The emulator is only ever configured here, by the test: it is never registered as a provider.
// One helper (useDaytonaDispatch) so every recovery family's Daytona case shares the same world.
import path from "node:path";
import type { LeasePolicy, Prisma } from "@copyback/db";
import { useTestDatabase } from "@copyback/db/testing";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createDaytonaProvider } from "../../src/providers/daytona/daytona-provider";
import { ProviderRegistry } from "../../src/providers/registry";
import type { EnvironmentProvider } from "../../src/providers/types";
import { startDaytonaEmulator, type DaytonaEmulator } from "../support/daytona/emulator";
import { DispatchWorld, type Task, type TaskOptions } from "./dispatch-fixture";

export const DAYTONA_KEY_VARIABLE = "DAYTONA_DISPATCH_TEST_KEY";

export class DaytonaDispatchWorld extends DispatchWorld {
  emulator!: DaytonaEmulator;
  daytona!: EnvironmentProvider;
  readonly variables = new Map<string, string>();
  /**
   * Runs right before each export (delta, full or salvage) reaches the plugin: a test arms the
   * emulator's faults here so they hit the copyback, not the agent's turn (its result file is a
   * download too). The plugin itself is called unchanged.
   */
  beforeExport: (() => void) | null = null;
  #environments = 0;

  override async setUp(): Promise<void> {
    await super.setUp();
    this.emulator = await startDaytonaEmulator({ root: path.join(this.instanceRoot, "daytona-emulator") });
    this.variables.set(DAYTONA_KEY_VARIABLE, this.emulator.apiKey);
    const plugin = this.#newPlugin();
    this.daytona = this.#withExportHook(plugin);
    this.registry.register(this.daytona);
  }

  /** The plugin as the fixture registers it: unchanged but for the beforeExport hook. */
  #withExportHook(plugin: EnvironmentProvider): EnvironmentProvider {
    const before = () => this.beforeExport?.();
    return {
      ...plugin,
      exportDelta: (lease, request) => (before(), plugin.exportDelta!(lease, request)),
      exportWorkspace: (lease, options) => (before(), plugin.exportWorkspace!(lease, options)),
      salvageExport: (lease, options) => (before(), plugin.salvageExport!(lease, options)),
    };
  }

  /**
   * A registry as a fresh controller process builds it: a new Daytona plugin (no cached clients
   * or sandboxes) reading the same key variable, pointed by the leases at the same emulator.
   */
  freshRegistry(): ProviderRegistry {
    const registry = new ProviderRegistry();
    registry.register(this.#withExportHook(this.#newPlugin()));
    return registry;
  }

  #newPlugin(): EnvironmentProvider {
    return createDaytonaProvider({
      instanceRoot: this.instanceRoot,
      variables: (name) => this.variables.get(name),
      backoff: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 50, maxRetryAfterMs: 2_000 },
      lifecycleTimeoutSec: 5,
      transferTimeoutSec: 30,
    });
  }

  override async tearDown(): Promise<void> {
    await this.emulator?.close();
    await super.tearDown();
  }

  /** An environment on the emulator (the config a board operator would write, apiUrl pointed at it). */
  async daytonaEnvironment(options: { policy?: LeasePolicy; config?: Prisma.InputJsonObject } = {}): Promise<string> {
    this.#environments += 1;
    const environment = await this.db.environment.create({
      data: {
        companyId: this.companyId,
        name: `daytona-${this.#environments}`,
        provider: "daytona",
        pluginId: this.daytona.pluginId,
        defaultLeasePolicy: options.policy ?? "ephemeral",
        config: { apiUrl: this.emulator.apiUrl, apiKeyEnv: DAYTONA_KEY_VARIABLE, ...options.config },
      },
    });
    return environment.id;
  }

  /** A task whose agent runs in a Daytona sandbox on the emulator (a new environment unless one is given). */
  async daytonaTask(options: Omit<TaskOptions, "provider" | "pluginId"> & { config?: Prisma.InputJsonObject } = {}): Promise<Task> {
    const { config, ...rest } = options;
    const environmentId = rest.environmentId ?? (await this.daytonaEnvironment({ ...(rest.policy ? { policy: rest.policy } : {}), ...(config ? { config } : {}) }));
    return this.task({ ...rest, environmentId });
  }

  /** The emulator's sandbox id behind a lease's provider id (`daytona:<id>...`). */
  sandboxIdOf(providerLeaseId: string | null): string {
    const id = /^daytona:([^?]+)/.exec(providerLeaseId ?? "")?.[1];
    if (!id) throw new Error(`not a Daytona lease id: ${providerLeaseId}`);
    return id;
  }

  /** The sandbox's workspace as the emulator keeps it on disk. */
  sandboxWorkspace(providerLeaseId: string | null): string {
    return path.join(this.instanceRoot, "daytona-emulator", this.sandboxIdOf(providerLeaseId), "copyback", "workspace");
  }
}

/** One Daytona world for a test file: set up once, the emulator's faults cleared after each test. */
export function useDaytonaDispatch(): DaytonaDispatchWorld {
  const world = new DaytonaDispatchWorld(useTestDatabase({ poolSize: 8 }));
  beforeAll(() => world.setUp());
  afterAll(() => world.tearDown());
  afterEach(() => {
    world.beforeExport = null;
    world.emulator.faults.clear();
    world.emulator.faults.releaseHangs();
  });
  return world;
}
