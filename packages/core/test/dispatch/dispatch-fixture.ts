// The world of the end-to-end run tests: a real database (useTestDatabase), an instance root with
// real host workspaces, a registry with the real local provider and a fake provider whose faults a
// test sets, and helpers to create a task, wake its agent, claim and execute the run.
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { LeasePolicy, Prisma, PrismaClient } from "@copyback/db";
import { useTestDatabase, type TestDatabase } from "@copyback/db/testing";
import { afterAll, afterEach, beforeAll } from "vitest";
import { DirectoryMergeLocks } from "../../src/copyback/locks/index";
import type { ExecuteRunDeps } from "../../src/dispatch/execute-run";
import { executeRun } from "../../src/dispatch/execute-run";
import { readProcessIdentity } from "../../src/process/read-process-identity";
import { createFakeProvider, type FakeExecScript, type FakeProvider } from "../../src/providers/fake/index";
import { createLocalProvider } from "../../src/providers/local/index";
import { ProviderRegistry } from "../../src/providers/registry";
import { SYSTEM_ACTOR, wakeAgent } from "../../src/runs/index";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";

export const PLAIN_LOCAL_PLUGIN = "test.local-plain";

export const RESULT_IN_REVIEW = JSON.stringify({ schema: "copyback.run-result.v1", outcome: "in_review", summary: "Work is ready for review." });
export const RESULT_DONE = JSON.stringify({ schema: "copyback.run-result.v1", outcome: "done", summary: "Finished." });

/** A shell line that submits `document` through the process adapter's result file. */
export const submitResult = (document: string = RESULT_IN_REVIEW) => `printf '%s' '${document}' > "$COPYBACK_RESULT_FILE"`;

export type TreeEntry = { type: "file"; content: string } | { type: "dir" } | { type: "symlink"; target: string };

/** A directory tree as path -> entry (links read, never followed). */
export async function readTree(root: string): Promise<Record<string, TreeEntry>> {
  const tree: Record<string, TreeEntry> = {};
  async function walk(dir: string, prefix: string) {
    for (const name of (await readdir(dir)).sort()) {
      const full = path.join(dir, name);
      const rel = prefix ? `${prefix}/${name}` : name;
      const stat = await lstat(full);
      if (stat.isSymbolicLink()) tree[rel] = { type: "symlink", target: await readlink(full) };
      else if (stat.isDirectory()) {
        tree[rel] = { type: "dir" };
        await walk(full, rel);
      } else tree[rel] = { type: "file", content: await readFile(full, "utf8") };
    }
  }
  await walk(root, "");
  return tree;
}

export async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), content);
  }
}

export interface TaskOptions {
  provider?: "local" | "fake";
  policy?: LeasePolicy;
  command?: string[];
  /** sh -c script (shorthand for command). */
  script?: string;
  adapterConfig?: Prisma.InputJsonObject;
  files?: Record<string, string>;
  /** The environment's plugin id (default: the built-in plugin of the provider). */
  pluginId?: string;
  /** Reuse an environment (same provider) instead of creating one. */
  environmentId?: string;
  /** Another task on an existing execution workspace (its host directory; `files` are not written). */
  workspaceId?: string;
}

export interface Task {
  companyId: string;
  environmentId: string;
  workspaceId: string;
  agentId: string;
  issueId: string;
  hostPath: string;
}

export class DispatchWorld {
  instanceRoot = "";
  companyId = "";
  registry = new ProviderRegistry();
  fake!: FakeProvider;
  #fakeScript: FakeExecScript = () => ({ exitCode: 0 });
  #deps: ExecuteRunDeps | undefined;
  #count = 0;

  constructor(readonly database: TestDatabase) {}

  get db(): PrismaClient {
    return this.database.prisma();
  }

  async setUp(): Promise<void> {
    this.instanceRoot = await realpath(await mkdtemp(path.join(os.tmpdir(), "copyback-dispatch-")));
    const company = await this.db.company.create({ data: { name: `Dispatch ${path.basename(this.instanceRoot)}`, issuePrefix: "DSP" } });
    this.companyId = company.id;
    this.registry.register(createLocalProvider({ instanceRoot: this.instanceRoot }));
    // The same provider without bubblewrap: its agents' PIDs are host PIDs a test can probe.
    this.registry.register(createLocalProvider({ instanceRoot: this.instanceRoot, pluginId: PLAIN_LOCAL_PLUGIN, isolation: "none", killGraceMs: 500 }));
    this.fake = createFakeProvider({ script: (context) => this.#fakeScript(context) });
    this.registry.register(this.fake);
    const controller = await readProcessIdentity(process.pid);
    if (!controller) throw new Error("no /proc identity for the test process");
    this.#deps = {
      db: this.db,
      registry: this.registry,
      instanceRoot: this.instanceRoot,
      locks: new DirectoryMergeLocks({ instanceRoot: this.instanceRoot }),
      databaseUrl: this.database.url(),
      controller,
      retry: { backoffMs: 0 },
    };
  }

  async tearDown(): Promise<void> {
    if (this.instanceRoot) await rm(this.instanceRoot, { recursive: true, force: true });
  }

  deps(extra: Partial<ExecuteRunDeps> = {}): ExecuteRunDeps {
    if (!this.#deps) throw new Error("DispatchWorld.setUp() first");
    return { ...this.#deps, ...extra };
  }

  /** What the fake provider's exec does from now on. */
  scriptFake(script: FakeExecScript): void {
    this.#fakeScript = script;
  }

  async task(options: TaskOptions = {}): Promise<Task> {
    this.#count += 1;
    const n = this.#count;
    const provider = options.provider ?? "local";
    const environmentId =
      options.environmentId ??
      (
        await this.db.environment.create({
          data: {
            companyId: this.companyId,
            name: `env-${n}`,
            provider,
            pluginId: options.pluginId ?? (provider === "local" ? "builtin.local" : "builtin.fake"),
            defaultLeasePolicy: options.policy ?? "ephemeral",
          },
        })
      ).id;
    const workspace = options.workspaceId
      ? await this.db.executionWorkspace.findUniqueOrThrow({ where: { id: options.workspaceId } })
      : await this.#newWorkspace(n, options.files ?? {});
    const command = options.command ?? ["/bin/sh", "-c", options.script ?? submitResult()];
    const agent = await this.db.agent.create({
      data: { companyId: this.companyId, name: `agent-${n}`, command, adapterConfig: options.adapterConfig ?? { timeoutSeconds: 60 }, environmentId },
    });
    const issue = await this.db.issue.create({
      data: { companyId: this.companyId, number: n, identifier: `DSP-${n}`, title: `Task ${n}`, status: "todo", executionWorkspaceId: workspace.id },
    });
    return { companyId: this.companyId, environmentId, workspaceId: workspace.id, agentId: agent.id, issueId: issue.id, hostPath: workspace.hostPath };
  }

  async #newWorkspace(n: number, files: Record<string, string>) {
    const hostPath = path.join(this.instanceRoot, "workspaces", `ws-${n}`);
    await mkdir(hostPath, { recursive: true });
    await writeTree(hostPath, files);
    return this.db.executionWorkspace.create({ data: { companyId: this.companyId, name: `ws-${n}`, hostPath: await realpath(hostPath) } });
  }

  async wake(task: Task): Promise<string> {
    const { runId } = await wakeAgent(this.db, { companyId: task.companyId, issueId: task.issueId, agentId: task.agentId, actor: SYSTEM_ACTOR });
    return runId;
  }

  async claim(limit: number) {
    return claimQueuedRuns(this.db, { limit, controller: this.deps().controller });
  }

  /** Wakes the task's agent, claims its run and executes it to a settled state. */
  async runOnce(task: Task, options: { deps?: Partial<ExecuteRunDeps>; signal?: AbortSignal } = {}): Promise<string> {
    const runId = await this.wake(task);
    const claimed = await this.claim(1);
    const mine = claimed.find((run) => run.runId === runId);
    if (!mine || claimed.length !== 1) throw new Error(`expected to claim run ${runId}, claimed ${JSON.stringify(claimed)}`);
    await executeRun(this.deps(options.deps), mine, options.signal ?? new AbortController().signal);
    return runId;
  }

  async state(runId: string) {
    const run = await this.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const coordinator = await this.db.nativeRunFinalization.findUnique({ where: { runId } });
    const operations = await this.db.workspaceOperation.findMany({ where: { runId }, orderBy: { createdAt: "asc" } });
    const leases = await this.db.environmentLease.findMany({ where: { runId } });
    const events = await this.db.runEvent.findMany({ where: { runId }, orderBy: [{ createdAt: "asc" }] });
    const issue = await this.db.issue.findUniqueOrThrow({ where: { id: run.nativeIssueId } });
    return { run, coordinator, operations, leases, events, issue, codes: events.map((e) => e.code) };
  }
}

/** A world for a fake-provider fault test file: set up once, faults and script reset after each test. */
export function useFakeFaultWorld(): DispatchWorld {
  const world = new DispatchWorld(useTestDatabase({ poolSize: 8 }));
  beforeAll(() => world.setUp());
  afterAll(() => world.tearDown());
  afterEach(() => {
    world.fake.faults.clear();
    world.scriptFake(() => ({ exitCode: 0 }));
  });
  return world;
}
