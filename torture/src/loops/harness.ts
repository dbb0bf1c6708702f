// What the harness's loops share: the system under test, the history, the seeded draws, the chaos
// state, and the kill bookkeeping the nemesis, its aimed kills and the clients keep together.
import type { PrismaClient } from "@copyback/db";
import type { TortureDatabase } from "../database";
import type { TortureEmulator } from "../daytona-mode/emulator";
import type { History } from "../history";
import type { TortureOptions } from "../options";
import { Rng } from "../rng";
import type { WorkerRecord, Workers } from "../system";
import type { World } from "../world";
import type { TortureHost } from "../two-host/hosts";

export interface ChaosState {
  /** Faults and new runs are injected while true (false from the quiet period on). */
  chaos: boolean;
  /** The loops end once true (the workers are being stopped). */
  stopping: boolean;
  /** The ballast file while the instance root is full. */
  disk: string | null;
  pgDown: boolean;
}

/** The seeded draws: the nemesis schedule and the restart delays, the clients' choices, the aimed kills. */
export interface Draws {
  nemesis: Rng;
  client: Rng;
  aim: Rng;
}

export function drawsOf(seed: number): Draws {
  return { nemesis: new Rng(seed), client: new Rng(seed ^ 0x5bd1e995), aim: new Rng(seed ^ 0x2545f491) };
}

/** What the kills have met and what they spare (nemesis-aim.ts), shared by the nemesis, the aim loop and the clients. */
export interface KillBook {
  /** Workers sent a SIGKILL (by record: a PID may be reused), until their exit is observed and they leave `live()`. */
  killed: WeakSet<WorkerRecord>;
  /** Runs whose copy or finalization a kill met. */
  hitRuns: Set<string>;
  /** Runs the clients armed with failExports 8 (their export is to fail into the reconciler's retry). */
  armedToRetry: Set<string>;
  /** The deadlines of the drawn aimed kills not sent yet, oldest first (aim.ts). */
  pendingKills: number[];
}

export interface Harness {
  options: TortureOptions;
  prisma: PrismaClient;
  db: TortureDatabase;
  world: World;
  workers: Workers;
  history: History;
  draws: Draws;
  state: ChaosState;
  /** PIDs under SIGSTOP, until their timer (or the quiet period) sends SIGCONT. */
  paused: Set<number>;
  kills: KillBook;
  /** The instance root (a tmpfs when `diskMount`, so the nemesis can fill it); the first host's with `--hosts`. */
  home: string;
  /** Every host (one unless `--hosts N`): its id, instance root and tmpfs. */
  hosts: TortureHost[];
  /** Hosts killed whole (two-host/kill-host.ts) and not returned yet: the restarter leaves their workers down. */
  deadHosts: Set<number>;
  /** The timers that bring each dead host back. */
  hostReturns: Map<number, NodeJS.Timeout>;
  diskMount: boolean;
  /** `--provider daytona`: the emulator the Daytona environments point at (null otherwise). */
  daytona: TortureEmulator | null;
  /** Operations started beside the loops (a Stop's wait for its moment): awaited before the history is read. */
  background: Set<Promise<void>>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const say = (m: string) => process.stdout.write(`[torture] ${m}\n`);
