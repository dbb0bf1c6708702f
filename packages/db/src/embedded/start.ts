// startEmbeddedPostgres: the embedded PostgreSQL of one instance root, from first initialisation
// to a ready server with the application database.
import fs from "node:fs/promises";
import path from "node:path";
import { postgresBinaries, type PostgresBinaries } from "./binaries";
import { reachableBinaries } from "./binary-placement";
import { ensureDatabase } from "./app-database";
import { prepareClusterDirectories } from "./access";
import { locateCluster } from "./cluster-location";
import { credentialsForNewCluster, requireCredentials } from "./credentials";
import { inspectDataDir } from "./data-dir";
import { EmbeddedPostgresError } from "./errors";
import { stopOnProcessExit } from "./exit-hooks";
import { initialiseCluster, removeAbandonedStaging } from "./initdb";
import {
  APP_DATABASE,
  DEFAULT_EMBEDDED_PORT,
  LISTEN_HOST,
  connectionUrl,
  instanceLayout,
  validatePort,
} from "./layout";
import { ensureNoLiveServer } from "./live-server";
import { assertPortFree } from "./port";
import { resolveServerUser } from "./server-user";
import { startServerProcess } from "./server-process";
import { collectorLogDir, startLogPath } from "./server-log";

export interface StartEmbeddedPostgresOptions {
  /** The instance root; the cluster lives in `<instanceRoot>/postgres/data`. */
  instanceRoot: string;
  /** TCP port on 127.0.0.1 (default 54329; never 5432). */
  port?: number;
  /** Receives our own progress notes (the server's log goes to files: server-log.ts). Default: discarded. */
  log?: (line: string) => void;
  /**
   * Trade crash safety for speed (fsync off, no full-page writes): for throwaway clusters such
   * as the test harness's, never for an instance root that holds real data.
   */
  unsafeFastWrites?: boolean;
  /**
   * Further local addresses to listen on beside 127.0.0.1, each with the subnet (CIDR) admitted
   * from it by a pg_hba `host` line with the password (scram-sha-256, as the loopback lines): the
   * torture's network namespaces (torture/src/two-host/netns.ts) reach the server through veth
   * addresses of this machine. Default none: the server listens on 127.0.0.1 only.
   */
  extraListen?: readonly { address: string; subnet: string }[];
}

export interface EmbeddedDatabase {
  /** Superuser URL of the `copyback` database (contains the password: do not log it). */
  url: string;
  port: number;
  /** `<instanceRoot>/postgres/data` (a symlink when the cluster had to live outside, see cluster-location.ts). */
  dataDir: string;
  /** The postmaster's PID. */
  pid: number;
  /**
   * Settles when the postmaster has exited: `requested` after stop(), otherwise it died (a crash,
   * kill -9) and `signal`/`code` say how. The supervisor (supervise.ts) restarts it then.
   */
  exited: Promise<{ requested: boolean; code: number | null; signal: NodeJS.Signals | null }>;
  /** Fast shutdown; idempotent; resolves once the server has exited. */
  stop(): Promise<void>;
}

// The binaries the server user runs, decided (and copied, when needed) once per process.
const placed = new Map<string, Promise<PostgresBinaries>>();
function binariesFor(
  packaged: PostgresBinaries,
  user: Awaited<ReturnType<typeof resolveServerUser>>,
  log: (line: string) => void,
): Promise<PostgresBinaries> {
  const key = `${user.kind === "switch" ? user.uid : "current"}:${packaged.postgres}`;
  let found = placed.get(key);
  if (!found) {
    found = reachableBinaries(packaged, user, log);
    found.catch(() => placed.delete(key));
    placed.set(key, found);
  }
  return found;
}

// Data directories this process is starting or running a server on: refuses a second start
// before any file is looked at (the cross-process case is handled through the files).
const ownedHere = new Set<string>();

export async function startEmbeddedPostgres(
  options: StartEmbeddedPostgresOptions,
): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => undefined);
  const port = validatePort(options.port ?? DEFAULT_EMBEDDED_PORT);
  const layout = instanceLayout(options.instanceRoot);
  if (ownedHere.has(layout.dataDir)) {
    throw new EmbeddedPostgresError(
      "ALREADY_RUNNING",
      `This process (PID ${process.pid}) already runs the embedded PostgreSQL on ${layout.dataDir}; use that instance or stop it first.`,
    );
  }
  ownedHere.add(layout.dataDir);
  try {
    const packaged = await postgresBinaries();
    const user = await resolveServerUser(log);
    // Checks first, changes after: a refused start leaves the instance root as it found it.
    const location = await locateCluster(layout, user);
    await ensureNoLiveServer(location.dataDir, log);
    const state = await inspectDataDir(location.dataDir, packaged.major);
    await assertPortFree(port);
    // As root, a clone the server's user cannot enter (under /root) runs a verified copy.
    const binaries = await binariesFor(packaged, user, log);
    await prepareClusterDirectories({
      layout,
      location,
      user,
      binaries: [binaries.postgres, binaries.initdb],
      log,
    });
    await removeAbandonedStaging(location);
    const credentials =
      state.kind === "initialised"
        ? await requireCredentials(layout.credentialsFile, layout.dataDir)
        : await credentialsForNewCluster(layout.credentialsFile);
    if (state.kind === "absent")
      await initialiseCluster({ layout, location, binaries, user, credentials, log });

    const settings: Record<string, string> = options.unsafeFastWrites
      ? { fsync: "off", synchronous_commit: "off", full_page_writes: "off" }
      : {};
    if (options.extraListen && options.extraListen.length > 0) {
      await admitSubnets(location.dataDir, options.extraListen.map((l) => l.subnet));
      settings.listen_addresses = [LISTEN_HOST, ...options.extraListen.map((l) => l.address)].join(",");
    }
    const server = await startServerProcess({
      binaries,
      user,
      server: { dataDir: location.dataDir, port, settings },
      cwd: location.home,
      startLog: startLogPath(layout),
    });
    const untrack = stopOnProcessExit(server);
    let stopRequested = false;
    const release = () => {
      untrack();
      ownedHere.delete(layout.dataDir);
    };
    void server.exited.then(() => {
      if (!stopRequested)
        log(
          `PostgreSQL (PID ${server.pid}) exited unexpectedly; the next start recovers from its log`,
        );
      release();
    });
    const stop = async () => {
      stopRequested = true;
      await server.stop();
      release();
    };

    try {
      await ensureDatabase({ credentials, port, database: APP_DATABASE });
    } catch (error) {
      await stop();
      throw error;
    }
    log(
      `PostgreSQL ${binaries.major} ready on 127.0.0.1:${port} (PID ${server.pid}, data ${layout.dataDir}, log ${collectorLogDir(layout)})`,
    );
    return {
      url: connectionUrl({
        user: credentials.user,
        password: credentials.password,
        port,
        database: APP_DATABASE,
      }),
      port,
      dataDir: layout.dataDir,
      pid: server.pid,
      exited: server.exited.then(() => ({
        requested: stopRequested,
        code: server.exitStatus()?.code ?? null,
        signal: server.exitStatus()?.signal ?? null,
      })),
      stop,
    };
  } catch (error) {
    // Every failure path above leaves no server of ours running on the directory.
    ownedHere.delete(layout.dataDir);
    throw error;
  }
}

/** Appends a `host all all SUBNET scram-sha-256` line to the cluster's pg_hba.conf for each subnet not yet there (the file keeps its owner). */
async function admitSubnets(dataDir: string, subnets: readonly string[]): Promise<void> {
  const file = path.join(dataDir, "pg_hba.conf");
  const text = await fs.readFile(file, "utf8");
  const present = new Set(
    text
      .split("\n")
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f[0] === "host")
      .map((f) => f[3]),
  );
  const lines = subnets.filter((s) => !present.has(s)).map((s) => `host all all ${s} scram-sha-256`);
  if (lines.length > 0) await fs.appendFile(file, `${text.endsWith("\n") ? "" : "\n"}${lines.join("\n")}\n`);
}
