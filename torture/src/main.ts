// The torture suite (command line: options.ts): real PostgreSQL, K real workers (on each of N
// hosts with `--hosts N`: two-host/), M host
// workspaces, clients queuing runs through core's wakeAgent, a seeded nemesis, the JSON-lines
// history of invoked and completed operations and the checker. This file wires the loops
// (loops/): the clients, the nemesis and its aimed kills, the attester, the restarter and the
// operator; then the quiet period, the final state and the verdict. Prints the counts table at the
// end; exits 1 on any violation (or when the system never settled).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPrismaClient, seedDemo } from "@copyback/db";
import { check } from "./checker/check";
import { formatCounts } from "./checker/counts";
import type { FinalState } from "./checker/final-state";
import { collectFinalState, scanHost } from "./collect";
import { openTortureDatabase } from "./database";
import { History, readHistory } from "./history";
import { aimLoop } from "./loops/aim";
import { attesterLoop } from "./loops/attester";
import { clientLoop } from "./loops/client";
import { drawsOf, say, sleep, type Harness } from "./loops/harness";
import { nemesisLoop, nemesisWeights, resume } from "./loops/nemesis";
import { operatorLoop } from "./loops/operator";
import { restartLoop } from "./loops/restarter";
import { parseOptions } from "./options";
import { cmdline } from "./procs";
import { repoRoot, Workers } from "./system";
import { waitSettled } from "./wait-settled";
import { formatFigures, workloadFigures } from "./workload-figures";
import { holdResolutions } from "./checker/harness-takeovers";
import { startStopHarness, type StopHarness } from "./harness-mode/stop-harness";
import { harnessWatchLoop } from "./harness-mode/watch-loop";
import { DAYTONA_KEY_VARIABLE, startTortureEmulator, type TortureEmulator } from "./daytona-mode/emulator";
import { COMPANY_ID, World } from "./world";
import { killWorkersOnInterrupt } from "./interrupt";
import { createHosts, unmountHosts } from "./two-host/hosts";
import { returnHost } from "./two-host/kill-host";
import { ClientAddrSampler, createNetns, namespaceOf, presentNetns, startForwarders, urlVia, type Forwarders, type Netns } from "./two-host/netns";

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const { seed, minutes } = options;
  const weights = nemesisWeights(options.without, options.provider, options.hosts);
  // The local agent runs torture/agent/agent.mjs from this checkout, and bubblewrap (the even
  // workers) mounts an empty tmpfs over /tmp: from a checkout under /tmp every bubblewrapped run
  // failed agent_exit_nonzero (its script missing) before it did anything.
  if (repoRoot === "/tmp" || repoRoot.startsWith("/tmp/")) {
    process.stderr.write(`[torture] the checkout ${repoRoot} is under /tmp, which bubblewrap hides from the agents (an empty tmpfs): run the suite from a checkout outside /tmp\n`);
    return 2;
  }
  const work = path.join(os.tmpdir(), `copyback-torture-${seed}-${Date.now().toString(36)}`);
  mkdirSync(work, { recursive: true });
  // Each host's instance root on its own small filesystem, so the nemesis can fill it (two-host/hosts.ts).
  const hosts = createHosts(work, options.hosts, say);
  const home = hosts[0]!.home;
  const diskMount = hosts.every((host) => host.diskMount);
  const historyFile = path.join(work, "history.jsonl");
  const history = new History(historyFile);
  say(`seed ${seed} (replay: pnpm torture -- --seed ${seed} --minutes ${minutes} --workers ${options.workers}${options.hosts > 1 ? ` --hosts ${options.hosts}` : ""}${options.embedded ? " --embedded" : ""}${options.attester === "harness" ? " --attester harness" : ""}${options.provider === "daytona" ? " --provider daytona" : ""})`);
  say(`work directory ${work}`);

  // With two hosts or more: a network namespace each (two-host/netns.ts), made before the embedded
  // server starts (it listens on their veth addresses). Not with the Daytona emulator, which
  // listens on this process's loopback only.
  let netns: Netns | null = null;
  if (options.hosts > 1) {
    if (options.provider === "daytona") say("--provider daytona: the hosts run without network namespaces (the Daytona emulator listens on this process's loopback)");
    else netns = await createNetns(options.hosts, say);
  }
  const db = await openTortureDatabase({ embedded: options.embedded, pgRoot: path.join(work, "pg"), idleTimeoutMs: options.idleTimeoutMs, ...(netns ? { extraListen: netns.hosts.map((n) => ({ address: n.rootAddress, subnet: n.subnet })) } : {}) });
  say(`PostgreSQL ${db.owned ? "embedded (owned by the harness: restarts are injected)" : `service at ${db.server} (not owned: no restart is injected)`}, database ${db.name}`);
  // The service PostgreSQL (not ours to configure) through a forwarder on each veth address (netns.ts says why).
  let forwarders: Forwarders | null = null;
  if (netns && !db.owned) {
    const target = new URL(db.url);
    forwarders = await startForwarders(netns.hosts, { host: target.hostname, port: Number(target.port || 5432) });
  }
  if (netns) say(`hosts in network namespaces: ${netns.hosts.map((n, i) => `${hosts[i]!.id} in ${n.name} (${n.nsAddress}, PostgreSQL via ${n.rootAddress}${forwarders ? `:${forwarders.ports[i]} forwarded to ${db.server}` : ""})`).join("; ")}`);
  const prisma = createPrismaClient({ databaseUrl: db.url, poolSize: 4, applicationName: "copyback-torture" });
  history.append("torture.start", { seed, minutes, workers: options.workers, hosts: hosts.map((host) => ({ id: host.id, home: host.home })), embeddedPg: db.owned, diskMount });

  await seedDemo(prisma, { instanceRoot: home });
  // --provider daytona: the emulator in this process (daytona-mode/), its sandboxes under the work directory.
  let daytona: TortureEmulator | null = null;
  if (options.provider === "daytona") {
    daytona = await startTortureEmulator(work, history);
    history.append("daytona.start", { apiUrl: daytona.emulator.apiUrl });
    say(`Daytona emulator at ${daytona.emulator.apiUrl} (sandboxes under ${path.join(work, "daytona")}): the non-fake slots run there`);
  }
  const world = new World(prisma, home, 12, daytona?.emulator.apiUrl ?? null);
  await world.createWorkspaces(options.workspaces, options.hosts > 1 ? hosts : []);
  const perWorkspace = options.slotsPerWorkspace;
  const sandboxKind = options.provider === "daytona" ? "daytona" : "local";
  for (let w = 0; w < world.workspaces.length; w++) for (let s = 0; s < perWorkspace; s++) await world.createSlot(w, s === perWorkspace - 1 ? "fake" : sandboxKind);
  // The shared slots on workspace 0; with two hosts, on the first workspace of each host (workspace i is host i mod N's), one shared environment each.
  if (options.sharedSlots > 0) {
    const places = options.hosts > 1 ? Math.min(options.hosts, world.workspaces.length) : 1;
    const shared: string[] = [];
    for (let p = 0; p < places; p++) shared.push(await world.createSharedEnvironment(sandboxKind));
    for (let s = 0; s < options.sharedSlots; s++) await world.createSlot(s % places, sandboxKind, shared[s % places]!);
  }
  const baseline: FinalState["baseline"] = {};
  for (const ws of world.workspaces) baseline[ws.hostPath] = scanHost(ws.hostPath);

  // --attester harness: the real stop harness; the workers in cgroups of their own (harness-mode/).
  let stopHarness: StopHarness | null = null;
  if (options.attester === "harness") {
    try {
      stopHarness = await startStopHarness();
    } catch (error) {
      process.stderr.write(`[torture] ${(error as Error).message}\n`);
      return 2;
    }
    history.append("harness.start", { url: stopHarness.child.url, place: stopHarness.place });
    say(`stop harness at ${stopHarness.child.url} (worker_cgroup stack under ${stopHarness.place.mountPoint}${stopHarness.place.parentPath}): it attests, the suite does not`);
  }
  const deadHosts = new Set<number>();
  const workers = new Workers({
    count: options.workers,
    databaseUrl: db.url,
    hosts,
    downHosts: deadHosts,
    historyFile,
    workDir: work,
    history,
    netns: netns ? { ip: netns.ip, hosts: netns.hosts.map((n, i) => ({ name: n.name, databaseUrl: urlVia(db.url, n.rootAddress, forwarders?.ports[i]) })) } : null,
    env: {
      WORKER_CONCURRENCY: options.workerConcurrency,
      WORKER_POLL_INTERVAL_MS: "200",
      RECONCILE_INTERVAL_MS: "1000",
      COPYBACK_EXPORT_TIMEOUT_MS: "8000",
      WORKER_DRAIN_TIMEOUT_MS: "20000",
      WORKER_ABORT_GRACE_MS: "5000",
      ...stopHarness?.workerEnv,
      ...(daytona ? { [DAYTONA_KEY_VARIABLE]: daytona.emulator.apiKey, COPYBACK_DAYTONA_LIFECYCLE_TIMEOUT_SEC: "15" } : {}),
    },
  });
  const stopKillingOnInterrupt = killWorkersOnInterrupt(workers, say);
  await workers.startAll();
  // Where the workers' connections come from (pg_stat_activity client_addr), sampled through the run.
  const clientAddrs = new ClientAddrSampler(db.admin, db.name);
  if (options.hosts > 1) clientAddrs.start();
  /** The worker PIDs seen in each namespace (namespaceOf, every 5 s while they live). */
  const workersInNetns = new Map<string, Set<number>>();
  const lookAtNamespaces = () => {
    if (!netns) return;
    for (const w of workers.live()) {
      // A worker just spawned may still be `ip netns exec` itself, before it entered the namespace and exec'd the worker.
      if (cmdline(w.pid).startsWith(`${netns.ip} `)) continue;
      const name = namespaceOf(w.pid, netns.hosts) ?? "none of this run's";
      workersInNetns.set(name, (workersInNetns.get(name) ?? new Set()).add(w.pid));
    }
  };
  const namespaceLooks = netns ? setInterval(lookAtNamespaces, 5_000) : null;
  const workersByNetns = () => [...workersInNetns].sort(([a], [b]) => a.localeCompare(b)).map(([k, pids]) => `${k} ${pids.size}`).join(", ");

  const h: Harness = {
    options,
    prisma,
    db,
    world,
    workers,
    history,
    draws: drawsOf(seed),
    state: { chaos: true, stopping: false, disk: null, pgDown: false },
    paused: new Set(),
    kills: { killed: new WeakSet(), hitRuns: new Set(), armedToRetry: new Set(), pendingKills: [] },
    home,
    diskMount,
    hosts,
    deadHosts,
    hostReturns: new Map(),
    background: new Set(),
    daytona,
  };
  const loops: Promise<void>[] = [clientLoop(h), nemesisLoop(h, weights), aimLoop(h), stopHarness ? harnessWatchLoop(h, stopHarness) : attesterLoop(h), restartLoop(h)];
  if (options.operator) loops.push(operatorLoop(h));

  const chaosEnd = Date.now() + minutes * 60_000;
  while (Date.now() < chaosEnd) await sleep(1_000);
  // Quiet period: no new runs, no new faults; everything paused resumes, every worker runs.
  h.state.chaos = false;
  lookAtNamespaces();
  if (netns) say(`at the quiet start: ${(await presentNetns(netns)).join(", ")} present; worker PIDs seen by namespace so far: ${workersByNetns()}`);
  history.append("quiet.start");
  say("quiet period: waiting for every run, coordinator and hold to settle");
  for (const pid of [...h.paused]) resume(h, pid, "quiet");
  for (const index of [...h.deadHosts]) returnHost(h, index, "quiet");
  if (h.state.disk) rmSync(h.state.disk, { force: true });
  // Daytona is honest again: armed faults dropped, held calls answered, stuck stops confirmed.
  daytona?.quiet();
  const { settled, unsettled } = await waitSettled(prisma, options.quietMs);
  history.append("quiet.end", { settled, unsettled });
  say(settled ? "settled" : `did not settle within the quiet period; at the last look:\n  ${unsettled.join("\n  ")}`);
  h.state.stopping = true;
  if (options.hosts > 1) await clientAddrs.sample();
  clientAddrs.stop();
  lookAtNamespaces();
  if (namespaceLooks) clearInterval(namespaceLooks);
  stopKillingOnInterrupt();
  await workers.stopAll();
  await Promise.all(loops);
  // Every operation completes before the history is read (a Stop still waiting for its moment too).
  await Promise.all([...h.background]);

  const final = await collectFinalState(prisma, {
    companyId: COMPANY_ID,
    instanceRoot: home,
    slots: world.slots.map(({ slot, issueId, dir, workspace, kind }) => ({ slot, issueId, dir, workspace, kind })),
    baseline,
    workspaces: world.workspaces.map((w) => w.hostPath),
    ...(daytona ? { daytonaSandboxes: daytona.finalSandboxes() } : {}),
    ...(options.hosts > 1 ? { hosts: { hosts: hosts.map((host) => ({ id: host.id!, home: host.home, workspaces: world.workspaces.filter((w) => w.placedOn === host.id).map((w) => w.hostPath) })) } } : {}),
  });
  writeFileSync(path.join(work, "final.json"), JSON.stringify(final, null, 1));
  const events = readHistory(historyFile);
  const verdict = check(events, final);
  const table = formatCounts(verdict, {
    seed: String(seed),
    minutes: String(minutes),
    workers: options.hosts > 1 ? `${options.workers} on each of ${options.hosts} hosts (${hosts.map((host) => host.id).join(", ")})` : String(options.workers),
    "host workspaces": String(world.workspaces.length),
    "shared reuse_by_environment slots": String(options.sharedSlots),
    "task slots (incl. retired)": String(world.slots.length),
    postgres: db.owned ? "embedded (restarts injected)" : `service ${db.server} (no restarts)`,
    ...(options.hosts > 1 ? { "network namespaces": netns ? `yes: ${netns.hosts.map((n, i) => `${hosts[i]!.id} in ${n.name} (${n.subnet})`).join(", ")}` : "no (the hosts shared this machine's network namespace)" } : {}),
    ...(netns ? { "worker PIDs seen by network namespace": workersByNetns() } : {}),
    ...(options.hosts > 1 ? { "PostgreSQL client_addr (most at once)": clientAddrs.format() } : {}),
    ...(forwarders ? { "forwarded connections (by host)": hosts.map((host, i) => `${host.id} ${forwarders!.accepted[i]}`).join(", ") } : {}),
    "full disk": diskMount ? "tmpfs 1 GiB instance root" : "not injected (no tmpfs)",
    "history events": String(events.length),
    settled: String(settled),
  });
  const figures = workloadFigures(events, verdict.counts, minutes);
  const resolutions = stopHarness ? holdResolutions(events) : null;
  process.stdout.write(`\n${table}\n${formatFigures(figures)}\n`);
  // Armed Daytona faults wait for their call: what the calls met (daytona.fault_hit), by fault and call.
  const daytonaHits: Record<string, number> = {};
  for (const e of events) if (e.ev === "daytona.fault_hit") daytonaHits[`${String(e.kind)} on ${String(e.op)}`] = (daytonaHits[`${String(e.kind)} on ${String(e.op)}`] ?? 0) + 1;
  if (daytona) process.stdout.write(`Daytona faults met by a call: ${Object.entries(daytonaHits).sort().map(([k, n]) => `${k} ${n}`).join(", ") || "none"}\n`);
  if (resolutions) process.stdout.write(`unverified-owner holds: taken over by harness receipt ${resolutions.harnessReceipt}, attested by an operator ${resolutions.operatorAttestation}, resolved otherwise ${resolutions.otherwise}, open and unattested at the last look ${resolutions.openAtLastLook}\n`);
  for (const v of verdict.violations.slice(0, 50)) process.stdout.write(`VIOLATION ${v.kind}: ${v.detail}\n`);
  // Beside the violations, so a log cut to its tail still says what never settled.
  for (const line of unsettled.slice(0, 20)) process.stdout.write(`UNSETTLED ${line}\n`);
  // After the verdict (a process still running is evidence until then), before the instance is kept or removed.
  const reaped = workers.reapLeftovers();
  if (reaped.length > 0) say(`killed ${reaped.length} process(es) the workers left running: ${reaped.map((r) => r.pid).join(", ")}`);
  await daytona?.close();
  await forwarders?.close();
  if (netns) {
    await netns.remove();
    const left = await presentNetns(netns);
    say(left.length === 0 ? `network namespaces and veths removed (${netns.hosts.map((n) => n.name).join(", ")})` : `left after removal: ${left.join(", ")}`);
  }
  if (stopHarness) {
    await stopHarness.stop();
    writeFileSync(path.join(work, "harness.log"), stopHarness.child.output());
  }
  if (options.report) writeFileSync(options.report, JSON.stringify({ seed, minutes, workers: options.workers, work, settled, unsettled, counts: verdict.counts, figures, ...(resolutions ? { holdResolutions: resolutions } : {}), ...(daytona ? { daytonaHits } : {}), violations: verdict.violations, table }, null, 2));
  await prisma.$disconnect();
  unmountHosts(hosts);
  if (!options.keep && verdict.violations.length === 0 && settled) {
    await db.drop();
    rmSync(work, { recursive: true, force: true });
  } else {
    // An embedded server is stopped with its data kept (it was dropped before, so a kept run of
    // seed 20261207 could not be read): restart it with pg_ctl on its data directory to inspect.
    say(`kept for inspection: ${work} (history.jsonl, final.json, worker logs), database ${db.name}${db.owned ? " (embedded server stopped; its data directory is under the work directory's pg/)" : ""}`);
    if (db.owned) await db.stop();
  }
  return verdict.violations.length === 0 && settled ? 0 : 1;
}

process.exitCode = await main();
