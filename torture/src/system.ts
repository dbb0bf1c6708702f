// The system under test: K worker processes started exactly as the launcher starts the worker
// (`node --import tsx src/main.ts` in apps/worker, own process group), sharing one instance root
// (with `--hosts N`: K on each host's root, with that host's id),
// each appending its merge trace to the history. Exits are observed and recorded; the harness
// remembers every worker it started (PID and /proc start time) and samples their descendants, so
// it can later prove that a recorded controller and its children are gone.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, openSync, readdirSync, symlinkSync, existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { harnessEnv } from "./env";
import type { History } from "./history";
import { descendants, startTimeOf, type ProcRef } from "./procs";
import { reapLeftovers } from "./reap";
import type { TortureHost } from "./two-host/hosts";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const workerDir = path.join(repoRoot, "apps/worker");

export interface WorkerRecord {
  index: number;
  /** The host it belongs to (`--hosts`: worker `index` is host floor(index / per-host count)'s). */
  host: number;
  generation: number;
  pid: number;
  start: string;
  bubblewrap: boolean;
  child: ChildProcess;
  exited: boolean;
  exit: Promise<void>;
  /** Descendants seen at the last sample while it lived (agents, bwrap). */
  lastDescendants: ProcRef[];
  stopped: boolean;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A search path without bwrap: a directory of links to everything in /usr/bin but bwrap. */
export function pathWithoutBubblewrap(workDir: string): string {
  const dir = path.join(workDir, "bin-without-bwrap");
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync("/usr/bin")) if (name !== "bwrap") symlinkSync(path.join("/usr/bin", name), path.join(dir, name));
  }
  return dir;
}

/**
 * With two hosts or more, a host's workers do not see the other hosts' instance roots, as on two
 * machines: they run in a mount namespace of their own (unshare, private propagation) where an
 * empty tmpfs covers each other host's root, so a workspace directory under another host's root
 * does not exist for them (the unbound `torture-unbound` workspace, world.ts). unshare and sh exec
 * in place, so the PID is still the worker's. One host: nothing is hidden, the command as before.
 */
export function hideOtherHosts(hosts: readonly TortureHost[], own: TortureHost): string[] {
  const others = hosts.filter((h) => h.index !== own.index).map((h) => h.home);
  if (others.length === 0) return [];
  const script = 'while [ "$1" != "--" ]; do mount -t tmpfs -o size=64k,mode=0700 tmpfs "$1" || exit 97; shift; done; shift; exec "$@"';
  return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", ...others, "--"];
}

export class Workers {
  readonly all: WorkerRecord[] = [];
  readonly current = new Map<number, WorkerRecord>();
  #sampler: NodeJS.Timeout | null = null;
  /** Every descendant any sample saw (by PID and start time), reparented or exited ones included. */
  readonly #seen = new Map<string, ProcRef>();

  constructor(
    private readonly opts: {
      count: number;
      databaseUrl: string;
      hosts: readonly TortureHost[];
      /** Hosts killed whole and not returned (two-host/kill-host.ts): no worker of theirs is started. */
      downHosts?: ReadonlySet<number>;
      historyFile: string;
      workDir: string;
      history: History;
      env: Record<string, string>;
      /**
       * The hosts' network namespaces (two-host/netns.ts), by host index: a host's workers are
       * started under `ip netns exec NAME` (which execs the same command: the PID is the worker's)
       * with the database URL through its veth. Absent: every worker in this namespace, as before.
       */
      netns?: { ip: string; hosts: readonly { name: string; databaseUrl: string }[] } | null;
    },
  ) {}

  /** `count` workers on each host: workers 0..count-1 are host 0's, and so on (bubblewrap on the even ones). */
  hostOf(index: number): TortureHost {
    return this.opts.hosts[Math.floor(index / this.opts.count)]!;
  }

  async start(index: number): Promise<WorkerRecord> {
    const bubblewrap = index % 2 === 0;
    const host = this.hostOf(index);
    const generation = this.all.filter((w) => w.index === index).length;
    const log = openSync(path.join(this.opts.workDir, `worker-${index}.log`), "a");
    const ns = this.opts.netns?.hosts[host.index];
    const inherited = harnessEnv.inherited();
    for (const key of ["DATABASE_URL", "COPYBACK_TEST_DATABASE_URL", "NODE_OPTIONS"]) delete inherited[key];
    const env: NodeJS.ProcessEnv = {
      ...inherited,
      DATABASE_URL: ns?.databaseUrl ?? this.opts.databaseUrl,
      COPYBACK_HOME: host.home,
      ...(host.id !== null ? { COPYBACK_HOST_ID: host.id } : {}),
      WORKER_HEALTH_PORT: String(await freePort()),
      COPYBACK_MERGE_TRACE_FILE: this.opts.historyFile,
      LOG_LEVEL: "warn",
      ...this.opts.env,
      PATH: bubblewrap ? (inherited.PATH ?? "/usr/bin:/bin") : pathWithoutBubblewrap(this.opts.workDir),
    };
    // Checked after the last await: a kill_host between the restarter's check and here must not be
    // followed by a worker of the dead host (spawned from here on synchronously).
    if (this.opts.downHosts?.has(host.index)) throw new Error(`host ${host.id} is down (kill_host): worker ${index} is not started`);
    const command = [...hideOtherHosts(this.opts.hosts, host), process.execPath, "--import", "tsx", "src/main.ts"];
    const [file, ...args] = ns && this.opts.netns ? [this.opts.netns.ip, "netns", "exec", ns.name, ...command] : command;
    const child = spawn(file!, args, { cwd: workerDir, env, stdio: ["ignore", log, log], detached: true });
    const pid = child.pid ?? -1;
    const start = startTimeOf(pid) ?? "";
    let resolveExit = () => undefined as void;
    const record: WorkerRecord = { index, host: host.index, generation, pid, start, bubblewrap, child, exited: false, exit: new Promise<void>((r) => (resolveExit = r)), lastDescendants: [], stopped: false };
    child.once("exit", (code, signal) => {
      record.exited = true;
      this.opts.history.append("worker.exit", { worker: index, generation, pid, code, signal });
      if (this.current.get(index) === record) this.current.delete(index);
      resolveExit();
    });
    this.all.push(record);
    this.current.set(index, record);
    this.opts.history.append("worker.start", { worker: index, generation, pid, start, bubblewrap, ...(host.id !== null ? { hostId: host.id } : {}) });
    return record;
  }

  async startAll(): Promise<void> {
    for (let i = 0; i < this.opts.count * this.opts.hosts.length; i++) await this.start(i);
    this.#sampler = setInterval(() => this.sample(), 500);
  }

  sample(): void {
    for (const w of this.current.values()) if (!w.exited) w.lastDescendants = descendants(w.pid);
    for (const w of this.all) for (const d of w.lastDescendants) this.#seen.set(`${d.pid}:${d.start}`, d);
  }

  live(): WorkerRecord[] {
    return [...this.current.values()].filter((w) => !w.exited);
  }

  /** The worker record of a recorded controller (PID and start time), if the harness started it. */
  find(pid: number, start: string): WorkerRecord | undefined {
    return this.all.find((w) => w.pid === pid && w.start === start);
  }

  async stopAll(): Promise<void> {
    if (this.#sampler) clearInterval(this.#sampler);
    this.sample();
    for (const w of this.live()) {
      if (w.stopped) process.kill(w.pid, "SIGCONT");
      w.child.kill("SIGTERM");
    }
    const deadline = setTimeout(() => {
      for (const w of this.live()) w.child.kill("SIGKILL");
    }, 60_000);
    await Promise.all(this.all.map((w) => w.exit));
    clearTimeout(deadline);
  }

  /** After stopAll: kills what the workers left running (killed workers' agents and their bwrap); answers them. */
  reapLeftovers(): ProcRef[] {
    this.sample();
    return reapLeftovers(this.#seen.values());
  }
}
