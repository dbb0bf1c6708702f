// `--hosts N` (N > 1, issue 23 part 3): each host in a network namespace of its own, made by the
// suite, so the hosts are apart on the network as two machines are: a host's workers (and their
// agents, the workers' children) run under `ip netns exec cb-torture-<pid>-<letter>` and reach
// PostgreSQL only through their veth pair to the root namespace (one /30 each); nothing of the
// other host's loopback (health ports, sockets) is in reach. Kept here, beside hosts.ts, so the
// one-host suite never touches it.
//  - The embedded server (--embedded, CI's case) listens on the root-side veth addresses too and
//    admits each /30 in pg_hba (packages/db start option `extraListen`), so pg_stat_activity
//    shows each host's connections by its own address.
//  - The machine's PostgreSQL service, whose config is not ours to change, is reached through a
//    small TCP forwarder in this process, bound on each root-side veth address and connecting to
//    the service's own address (startForwarders). Chosen over running without namespaces: the
//    hosts are then apart on the network in both modes (a developer's run and CI's), and the
//    forwarder counts each host's connections itself (the service sees them all from loopback).
//  - Where namespaces cannot be made (not root, no `ip`, EPERM, the Daytona emulator on this
//    process's loopback), one warning and the run goes on without them, as before.
// Everything made is removed at the end, on an exception ('exit') and on SIGINT/SIGTERM/SIGHUP;
// a namespace or veth of this naming whose torture process is gone is removed at the start.
// Only async execFile while the suite runs; execFileSync (stdio ignored) only at exit.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import net from "node:net";
import { promisify } from "node:util";

const run = promisify(execFile);

export const NETNS_PREFIX = "cb-torture-";
const VETH_PREFIX = "cbt";
const LETTERS = "abcd";

export interface HostNetns {
  index: number;
  /** The namespace's name (`ip netns`). */
  name: string;
  /** The veth ends: in the root namespace, and moved into the host's namespace. */
  rootIf: string;
  nsIf: string;
  /** The root-side address (what the host's workers connect to) and the host side's. */
  rootAddress: string;
  nsAddress: string;
  /** The /30 both lie in, CIDR. */
  subnet: string;
}

/**
 * The address plan of one torture process's hosts: host i -> its namespace name, veth names (15
 * characters at most, the kernel's limit) and a /30 in 10.213.0.0/16. The /30 depends on the PID
 * as well, so two torture runs on one machine (two engineers) get distinct subnets. Pure.
 */
export function netnsPlan(pid: number, count: number): HostNetns[] {
  if (!Number.isInteger(count) || count < 1 || count > LETTERS.length) throw new Error(`namespaces for 1 to ${LETTERS.length} hosts, not ${count}`);
  if (!Number.isInteger(pid) || pid < 1) throw new Error(`not a PID: ${pid}`);
  // 16384 blocks of /30 in the /16; LETTERS.length consecutive ones per process.
  const first = (pid % (16384 / LETTERS.length)) * LETTERS.length;
  const plan: HostNetns[] = [];
  for (let index = 0; index < count; index++) {
    const base = (first + index) * 4;
    const octets = (last: number) => `10.213.${Math.floor(base / 256)}.${(base % 256) + last}`;
    const letter = LETTERS[index]!;
    plan.push({
      index,
      name: `${NETNS_PREFIX}${pid}-${letter}`,
      rootIf: `${VETH_PREFIX}${pid}${letter}r`,
      nsIf: `${VETH_PREFIX}${pid}${letter}n`,
      rootAddress: octets(1),
      nsAddress: octets(2),
      subnet: `${octets(0)}/30`,
    });
  }
  return plan;
}

/** The PID a leftover's name carries (namespace `cb-torture-<pid>-<l>`, veth `cbt<pid><l>r`), or null. Pure. */
export function pidOfName(name: string): number | null {
  const m = /^cb-torture-(\d+)-[a-d]$/.exec(name) ?? /^cbt(\d+)[a-d][rn]$/.exec(name);
  return m ? Number(m[1]) : null;
}

/** A postgresql:// URL with its host (and port) replaced. Pure. */
export function urlVia(url: string, host: string, port?: number): string {
  const u = new URL(url);
  u.hostname = host;
  if (port !== undefined) u.port = String(port);
  return u.toString();
}

export interface Netns {
  ip: string;
  hosts: HostNetns[];
  /** Removes every namespace and veth made (idempotent). */
  remove(): Promise<void>;
}

async function findIp(): Promise<string | null> {
  for (const candidate of ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]) if (existsSync(candidate)) return candidate;
  return null;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Namespaces and root-side veths of this naming whose torture process is gone (a killed earlier run). */
async function removeLeftovers(ip: string, warn: (m: string) => void): Promise<void> {
  const names = (await run(ip, ["netns", "list"]).catch(() => ({ stdout: "" }))).stdout.split("\n").map((l) => l.split(" ")[0] ?? "");
  const links = (await run(ip, ["-o", "link", "show"]).catch(() => ({ stdout: "" }))).stdout.split("\n").map((l) => (l.split(": ")[1] ?? "").split("@")[0] ?? "");
  for (const name of names) {
    const pid = pidOfName(name);
    if (pid === null || pid === process.pid || processAlive(pid)) continue;
    await run(ip, ["netns", "del", name]).then(() => warn(`removed the network namespace ${name} an earlier torture run (PID ${pid}, gone) left`)).catch(() => undefined);
  }
  for (const link of links) {
    const pid = pidOfName(link);
    if (pid === null || pid === process.pid || processAlive(pid) || !link.endsWith("r")) continue;
    await run(ip, ["link", "del", link]).then(() => warn(`removed the veth ${link} an earlier torture run (PID ${pid}, gone) left`)).catch(() => undefined);
  }
}

function removeSync(ip: string, hosts: readonly HostNetns[]): void {
  for (const host of hosts) {
    // Deleting the root end removes the pair even while a leftover process keeps the namespace alive.
    for (const args of [["link", "del", host.rootIf], ["netns", "del", host.name]]) {
      try {
        execFileSync(ip, args, { stdio: "ignore", timeout: 10_000 });
      } catch {
        /* already gone */
      }
    }
  }
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Makes one namespace per host with its veth pair, or answers null after one warning (`why`)
 * when this machine does not allow it; never throws for that.
 */
export async function createNetns(count: number, warn: (m: string) => void): Promise<Netns | null> {
  const ip = await findIp();
  if (process.getuid?.() !== 0) return (warn("not root: the hosts run without network namespaces (as before)"), null);
  if (!ip) return (warn("no `ip` (iproute2) here: the hosts run without network namespaces (as before)"), null);
  await removeLeftovers(ip, warn);
  const hosts = netnsPlan(process.pid, count);
  let removed = false;
  const removeNow = () => {
    if (removed) return;
    removed = true;
    detach();
    removeSync(ip, hosts);
  };
  // On a signal: remove, then stand aside and let the signal do what it would have (the embedded
  // server's own hooks, packages/db exit-hooks.ts, stop it when they are alone again).
  const onSignal = (signal: (typeof SIGNALS)[number]) => {
    if (!removed) warn(`${signal}: removing the network namespaces ${hosts.map((h) => h.name).join(", ")} and their veths`);
    removeNow();
    process.kill(process.pid, signal);
  };
  const handlers = SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const);
  const onExit = () => removeNow();
  function detach() {
    process.off("exit", onExit);
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
  process.on("exit", onExit);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  try {
    for (const h of hosts) {
      const ns = (...args: string[]) => run(ip, ["-n", h.name, ...args]);
      await run(ip, ["netns", "add", h.name]);
      await run(ip, ["link", "add", h.rootIf, "type", "veth", "peer", "name", h.nsIf]);
      await run(ip, ["link", "set", h.nsIf, "netns", h.name]);
      await run(ip, ["addr", "add", `${h.rootAddress}/30`, "dev", h.rootIf]);
      await run(ip, ["link", "set", h.rootIf, "up"]);
      await ns("addr", "add", `${h.nsAddress}/30`, "dev", h.nsIf);
      await ns("link", "set", h.nsIf, "up");
      await ns("link", "set", "lo", "up");
      // What the workers will be started with: it must work before the run counts on it.
      await run(ip, ["netns", "exec", h.name, process.execPath, "-e", ""], { timeout: 30_000 });
    }
  } catch (error) {
    removeNow();
    const e = error as { stderr?: string; message: string };
    warn(`network namespaces could not be made here (${(e.stderr ?? "").trim() || e.message}): the hosts run without them (as before)`);
    return null;
  }
  return {
    ip,
    hosts,
    remove: async () => {
      if (removed) return;
      removed = true;
      detach();
      for (const h of hosts) {
        await run(ip, ["link", "del", h.rootIf]).catch(() => undefined);
        await run(ip, ["netns", "del", h.name]).catch(() => undefined);
      }
    },
  };
}

/** The namespaces and root-side veths of this process still present (for the report: none after remove). */
export async function presentNetns(netns: Netns): Promise<string[]> {
  const names = (await run(netns.ip, ["netns", "list"]).catch(() => ({ stdout: "" }))).stdout;
  const links = (await run(netns.ip, ["-o", "link", "show"]).catch(() => ({ stdout: "" }))).stdout;
  return netns.hosts.flatMap((h) => [names.includes(h.name) ? h.name : null, links.includes(`${h.rootIf}@`) || links.includes(`${h.rootIf}:`) ? h.rootIf : null]).filter((n): n is string => n !== null);
}

export interface Forwarders {
  /** Host index -> the port its forwarder listens on (on the host's root-side address). */
  ports: number[];
  /** Connections each host's forwarder accepted. */
  accepted: number[];
  close(): Promise<void>;
}

/**
 * For a PostgreSQL server this suite does not own: one TCP forwarder per host on its root-side
 * veth address (a free port) to `target`. Each connection is piped both ways (drained: nothing is
 * buffered unread), and closed with its peer; close() ends every connection and the listeners.
 */
export async function startForwarders(hosts: readonly HostNetns[], target: { host: string; port: number }): Promise<Forwarders> {
  const sockets = new Set<net.Socket>();
  const servers: net.Server[] = [];
  const ports: number[] = [];
  const accepted = hosts.map(() => 0);
  for (const h of hosts) {
    const server = net.createServer((inbound) => {
      accepted[h.index]! += 1;
      const outbound = net.connect({ host: target.host, port: target.port });
      for (const s of [inbound, outbound]) {
        sockets.add(s);
        s.on("error", () => undefined);
        s.once("close", () => {
          sockets.delete(s);
          inbound.destroy();
          outbound.destroy();
        });
      }
      inbound.pipe(outbound);
      outbound.pipe(inbound);
    });
    server.on("error", () => undefined);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, h.rootAddress, () => resolve());
    });
    servers.push(server);
    ports.push((server.address() as net.AddressInfo).port);
  }
  return {
    ports,
    accepted,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}

/** The most connections seen at once from each client address (pg_stat_activity), sampled. */
export class ClientAddrSampler {
  readonly most = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;
  #busy = false;

  constructor(
    private readonly admin: <T>(fn: (client: { query: (sql: string, values: unknown[]) => Promise<{ rows: { addr: string | null; n: string }[] }> }) => Promise<T>) => Promise<T>,
    private readonly database: string,
  ) {}

  start(everyMs = 5_000): void {
    this.#timer = setInterval(() => void this.sample(), everyMs);
  }

  async sample(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const rows = await this.admin(async (c) => (await c.query("SELECT host(client_addr) AS addr, count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1", [this.database])).rows);
      for (const row of rows) {
        const addr = row.addr ?? "local socket";
        this.most.set(addr, Math.max(this.most.get(addr) ?? 0, Number(row.n)));
      }
    } catch {
      /* PostgreSQL restarting (the nemesis): the next sample */
    } finally {
      this.#busy = false;
    }
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  /** "10.213.0.2 4, 127.0.0.1 3" (address order). */
  format(): string {
    return [...this.most.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([addr, n]) => `${addr} ${n}`).join(", ") || "none seen";
  }
}

/** The namespace (of `hosts`) the process runs in: its /proc/PID/ns/net is the namespace's file (same inode), or null. */
export function namespaceOf(pid: number, hosts: readonly HostNetns[]): string | null {
  try {
    const own = statSync(`/proc/${pid}/ns/net`);
    for (const h of hosts) {
      const file = statSync(`/run/netns/${h.name}`, { throwIfNoEntry: false });
      if (file && file.ino === own.ino && file.dev === own.dev) return h.name;
    }
  } catch {
    /* gone */
  }
  return null;
}
