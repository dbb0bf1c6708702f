// The company's torture fixtures: M host workspaces under the instance root (a few baseline files
// each, never touched by runs), and task slots: one issue, one agent and one environment each
// (local or fake), several per workspace so runs contend for the same directory; and
// shared slots: several tasks whose agents share ONE `reuse_by_environment` local environment and
// one execution workspace, as production's do, so a released sandbox is reused by another task's
// run (the held-lease rule decides which may be). A slot whose
// environment still has a lease of a dead run, or whose task a file-recovery obligation holds
// (nobody recovers the files here), is retired and replaced.
// With `--provider daytona` the local slots are Daytona slots instead: the same agent and plan, in a
// sandbox of the emulator (daytona-mode/), each environment pointed at it by its config; their
// auto-delete and auto-archive settings vary by slot (daytonaConfig), so R-DT-1's stop and R-DT-4's
// archive meet every setting.
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DEMO_COMPANY_ID, type PrismaClient } from "@copyback/db";
import type { SlotInfo } from "./checker/final-state";
import { DAYTONA_KEY_VARIABLE } from "./daytona-mode/emulator";
import { repoRoot } from "./system";

export const COMPANY_ID = DEMO_COMPANY_ID;
const AGENT = path.join(repoRoot, "torture/agent/agent.mjs");

export interface Slot extends SlotInfo {
  agentId: string;
  environmentId: string;
  workspaceId: string;
  currentRun: string | null;
  retired: boolean;
  /** The shared reuse_by_environment environment this slot's agent uses (null: its own ephemeral one). */
  sharedEnvironmentId: string | null;
}

export class World {
  readonly slots: Slot[] = [];
  /** `placedOn`: the host whose instance root holds the directory (two-host mode), whether or not the row is bound to it. */
  readonly workspaces: { id: string; hostPath: string; hostId: string | null; placedOn: string | null }[] = [];
  #counter = 0;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly instanceRoot: string,
    private readonly agentTimeoutSeconds: number,
    /** The Daytona emulator's API URL (`--provider daytona`), or null. */
    private readonly daytonaApiUrl: string | null = null,
  ) {}

  /**
   * `count` host workspaces. With `hosts` (two-host mode), workspace i lies under host i mod N's
   * instance root and is registered bound to that host's id, as a workspace registered on that host
   * is; else under the one instance root, unbound (the first claim binds it). Two-host mode adds
   * one more, `torture-unbound`, under the first host's root but unbound, as the demo seed made its
   * workspace before issue 23's fix: the other host has no such directory (its workers do not see
   * the first host's root: system.ts), so only the first host may claim its runs and bind it.
   */
  async createWorkspaces(count: number, hosts: readonly { id: string | null; home: string }[] = []): Promise<void> {
    const place = async (name: string, host: { id: string | null; home: string } | null, bind: boolean) => {
      const dir = path.join(host?.home ?? this.instanceRoot, "workspaces", name);
      const label = name.replace(/^torture-/, "");
      mkdirSync(path.join(dir, "base"), { recursive: true });
      writeFileSync(path.join(dir, "base", "README.md"), `# torture workspace ${label}\nRuns write only under t/<task>/.\n`);
      writeFileSync(path.join(dir, "base", "data.txt"), `baseline data of workspace ${label}\n`.repeat(50));
      const hostPath = realpathSync(dir);
      const hostId = bind ? (host?.id ?? null) : null;
      const row = await this.prisma.executionWorkspace.create({ data: { companyId: COMPANY_ID, name: `${name}-${Date.now()}`, hostPath, ...(hostId ? { hostId } : {}) } });
      this.workspaces.push({ id: row.id, hostPath, hostId, placedOn: host?.id ?? null });
    };
    for (let i = 0; i < count; i++) await place(`torture-${i}`, hosts.length > 0 ? hosts[i % hosts.length]! : null, true);
    if (hosts.length > 1) await place("torture-unbound", hosts[0]!, false);
  }

  /** One local (or Daytona) environment of policy reuse_by_environment, for the shared slots (createSlot's `sharedEnvironmentId`). */
  async createSharedEnvironment(kind: "local" | "daytona" = "local"): Promise<string> {
    const n = ++this.#counter;
    const environment = await this.prisma.environment.create({
      data: { companyId: COMPANY_ID, name: `torture shared ${kind} ${n}`, provider: kind, pluginId: `builtin.${kind}`, config: kind === "daytona" ? this.daytonaConfig(n) : {}, defaultLeasePolicy: "reuse_by_environment" },
    });
    return environment.id;
  }

  /**
   * A Daytona environment's config: the emulator's URL, the key's variable, and by slot one of
   * three Daytona settings: auto-archive after a minute; auto-delete the moment it stops
   * (Daytona's ephemeral: R-DT-1's disable-then-stop is all that keeps its files); auto-delete
   * and auto-archive after a minute.
   */
  daytonaConfig(n: number): object {
    if (!this.daytonaApiUrl) throw new Error("no Daytona emulator in this torture run");
    const settings = [{ autoArchiveMinutes: 1 }, { autoDeleteMinutes: 0 }, { autoDeleteMinutes: 1, autoArchiveMinutes: 1 }][n % 3];
    return { apiUrl: this.daytonaApiUrl, apiKeyEnv: DAYTONA_KEY_VARIABLE, ...settings };
  }

  async createSlot(workspaceIndex: number, kind: SlotInfo["kind"], sharedEnvironmentId: string | null = null): Promise<Slot> {
    const ws = this.workspaces[workspaceIndex]!;
    const n = ++this.#counter;
    const number = 100_000 + n;
    const identifier = `TORT-${number}`;
    const dir = `t/${identifier}`;
    if (sharedEnvironmentId && kind === "fake") throw new Error("shared slots are local or daytona");
    const environment = sharedEnvironmentId ? { id: sharedEnvironmentId } : await this.prisma.environment.create({
      data: {
        companyId: COMPANY_ID,
        name: `torture ${kind} ${n}`,
        provider: kind,
        pluginId: `builtin.${kind}`,
        config: kind === "fake" ? this.fakeConfig(dir, {}) : kind === "daytona" ? this.daytonaConfig(n) : {},
        defaultLeasePolicy: "ephemeral",
      },
    });
    const agent = await this.prisma.agent.create({
      data: {
        companyId: COMPANY_ID,
        name: `torture ${kind} agent ${n}`,
        environmentId: environment.id,
        adapterConfig: { timeoutSeconds: this.agentTimeoutSeconds },
        command: kind === "fake" ? ["fake-agent"] : [process.execPath, AGENT, dir],
      },
    });
    const issue = await this.prisma.issue.create({
      data: {
        companyId: COMPANY_ID,
        number,
        identifier,
        title: `torture task ${n} (${kind})`,
        status: "todo",
        assigneeAgentId: agent.id,
        executionWorkspaceId: ws.id,
      },
    });
    const slot: Slot = { slot: identifier, issueId: issue.id, dir, workspace: ws.hostPath, kind, agentId: agent.id, environmentId: environment.id, workspaceId: ws.id, currentRun: null, retired: false, sharedEnvironmentId };
    this.slots.push(slot);
    return slot;
  }

  /** The shared local environment's config: `faults.failExports` arms the next n exports of each new allocation (local-provider.ts, in the exporting process). */
  localConfig(failExports: number | null): object {
    return failExports ? { faults: { failExports } } : {};
  }

  /** The fake environment's config: its scripted turn (one file with the run's token) and the faults of the next lease. */
  fakeConfig(dir: string, faults: Record<string, unknown>): object {
    const file = `${dir}/fake-{runId}.txt`;
    return {
      ...(Object.keys(faults).length > 0 ? { faults } : {}),
      turn: {
        exitCode: 0,
        resultFile: JSON.stringify({ schema: "copyback.run-result.v1", outcome: "in_review", summary: "torture fake run {runId}" }),
        files: { [file]: `copyback-torture token={runId} path=${file}\n` },
      },
    };
  }
}
