// The emulator's sandbox records: Daytona's Sandbox DTO, lifecycle moves (an answer in the
// transitional state, settling shortly after), timers driven by the test's clock, and
// the directory of files that outlives stop and archive and goes with delete.
import { randomUUID } from "node:crypto";
import { promises as fs } from "node:fs";
import type { EmulatorClock } from "./clock";
import { sandboxDir } from "./file-store";
import { transition, type LifecycleAction, type SandboxState } from "./state-machine";
import { nextDueEvent } from "./timers";

export interface SandboxRecord {
  id: string;
  name: string;
  state: SandboxState;
  labels: Record<string, string>;
  env: Record<string, string>;
  snapshot: string | undefined;
  target: string;
  cpu: number;
  gpu: number;
  memory: number;
  disk: number;
  autoStopInterval: number;
  autoArchiveInterval: number;
  autoDeleteInterval: number;
  createdAtMs: number;
  updatedAtMs: number;
  lastActivityAtMs: number;
  stoppedAtMs: number | null;
  /** Set by a `never_confirms` fault: the transitional state never settles. */
  stuck: boolean;
  dir: string;
}

export class EmulatorError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export interface SandboxRegistryOptions {
  root: string;
  clock: EmulatorClock;
  toolboxProxyUrl: () => string;
  settleMs: number;
}

export class SandboxRegistry {
  readonly records = new Map<string, SandboxRecord>();
  constructor(private readonly options: SandboxRegistryOptions) {
    options.clock.onAdvance(() => this.runTimers());
  }

  async create(input: Partial<SandboxRecord> & { labels: Record<string, string> }): Promise<SandboxRecord> {
    const now = this.options.clock.now();
    const id = randomUUID();
    if (input.name && [...this.records.values()].some((r) => r.name === input.name && r.state !== "destroyed")) {
      throw new EmulatorError(409, `Sandbox with name ${input.name} already exists`);
    }
    const record: SandboxRecord = {
      id,
      name: input.name ?? id,
      state: "creating",
      labels: input.labels,
      env: input.env ?? {},
      snapshot: input.snapshot,
      target: input.target ?? "us",
      cpu: input.cpu ?? 1,
      gpu: input.gpu ?? 0,
      memory: input.memory ?? 1,
      disk: input.disk ?? 3,
      autoStopInterval: input.autoStopInterval ?? 15,
      autoArchiveInterval: input.autoArchiveInterval ?? 7 * 24 * 60,
      autoDeleteInterval: input.autoDeleteInterval ?? -1,
      createdAtMs: now,
      updatedAtMs: now,
      lastActivityAtMs: now,
      stoppedAtMs: null,
      stuck: false,
      dir: sandboxDir(this.options.root, id),
    };
    await fs.mkdir(record.dir, { recursive: true });
    this.records.set(id, record);
    this.settleLater(record, "creating", "started");
    return record;
  }

  /** By id or name; destroyed sandboxes answer 404 as Daytona's do. */
  find(idOrName: string): SandboxRecord {
    const record = this.records.get(idOrName) ?? [...this.records.values()].find((r) => r.name === idOrName && r.state !== "destroyed");
    if (!record || record.state === "destroyed") throw new EmulatorError(404, `Sandbox with ID or name ${idOrName} not found`);
    return record;
  }

  list(): SandboxRecord[] {
    return [...this.records.values()].filter((r) => r.state !== "destroyed");
  }

  /** A user action; `confirm: false` leaves the transitional state in place forever. */
  act(record: SandboxRecord, action: LifecycleAction, confirm = true): void {
    const result = transition(record.state, action);
    if (result.kind === "illegal") throw new EmulatorError(result.status, result.message);
    if (result.kind === "noop") return;
    this.setState(record, result.transitional);
    if (action === "start") record.lastActivityAtMs = this.options.clock.now();
    if (!confirm) {
      record.stuck = true;
      return;
    }
    this.settleLater(record, result.transitional, result.settled);
  }

  /** Moves the sandbox at once (timers, behind-the-back changes). */
  force(record: SandboxRecord, state: SandboxState, atMs = this.options.clock.now()): void {
    this.setState(record, state, atMs);
    if (state === "destroyed") void fs.rm(record.dir, { recursive: true, force: true });
    // An ephemeral sandbox (auto-delete 0) goes the moment it stops, without waiting for the clock.
    if (state === "stopped") this.runTimersFor(record);
  }

  touch(record: SandboxRecord): void {
    record.lastActivityAtMs = this.options.clock.now();
  }

  private settleLater(record: SandboxRecord, from: SandboxState, to: SandboxState): void {
    const settle = () => {
      if (record.state === from && !record.stuck) this.force(record, to);
    };
    if (this.options.settleMs <= 0) settle();
    else setTimeout(settle, this.options.settleMs).unref();
  }

  private setState(record: SandboxRecord, state: SandboxState, atMs = this.options.clock.now()): void {
    if (state === "stopped" && record.state !== "stopped") record.stoppedAtMs = atMs;
    if (state === "started") {
      record.stoppedAtMs = null;
      record.stuck = false;
    }
    record.state = state;
    record.updatedAtMs = this.options.clock.now();
  }

  private runTimers(): void {
    for (const record of this.records.values()) this.runTimersFor(record);
  }

  private runTimersFor(record: SandboxRecord): void {
    const now = this.options.clock.now();
    // Events chain: a sandbox auto-stopped at T can be auto-archived at T + interval within one advance.
    const due = nextDueEvent(record, now);
    if (!due) return;
    this.force(record, due.action === "stop" ? "stopped" : due.action === "archive" ? "archived" : "destroyed", due.atMs);
    if (record.state !== "destroyed") this.runTimersFor(record);
  }

  dto(record: SandboxRecord): Record<string, unknown> {
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      id: record.id,
      organizationId: "emulator-org",
      name: record.name,
      snapshot: record.snapshot,
      user: "daytona",
      env: record.env,
      labels: record.labels,
      public: false,
      networkBlockAll: false,
      target: record.target,
      cpu: record.cpu,
      gpu: record.gpu,
      memory: record.memory,
      disk: record.disk,
      state: record.state,
      desiredState: record.state === "stopped" || record.state === "stopping" ? "stopped" : record.state === "archived" || record.state === "archiving" ? "archived" : record.state === "destroyed" || record.state === "destroying" ? "destroyed" : "started",
      autoStopInterval: record.autoStopInterval,
      autoArchiveInterval: record.autoArchiveInterval,
      autoDeleteInterval: record.autoDeleteInterval,
      createdAt: iso(record.createdAtMs),
      updatedAt: iso(record.updatedAtMs),
      lastActivityAt: iso(record.lastActivityAtMs),
      toolboxProxyUrl: this.options.toolboxProxyUrl(),
    };
  }
}
