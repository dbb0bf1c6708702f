// The final state for the checker: the database rows it judges and every host workspace's files.
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import path from "node:path";
import type { PrismaClient } from "@copyback/db";
import { listRetainedSandboxes } from "@copyback/core/sandboxes";
import { hasAgentProcessRecord } from "@copyback/core/records";
import type { FinalState, HostEntry, SlotInfo } from "./checker/final-state";
import type { FinalHosts } from "./checker/hosts";
import { acquisitionKey, acquisitionsWithoutAgent, leasesNoAgentRanOn } from "./checker/attempts";
import type { DaytonaSandboxFinal } from "./daytona-mode/emulator";

const TOKEN = /^copyback-torture token=([0-9a-f-]{36}) /;
/** The reason the harness's operator gives its Discards (operator.ts): how the checker tells them from any other destruction. */
export const OPERATOR_DISCARD_REASON = "torture operator: the run's files were verified in its retained sandbox, then given up";
const record = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

const providerOf = (provider: string | undefined): FinalState["runs"][number]["provider"] => (provider === "fake" || provider === "daytona" ? provider : "local");

export function scanHost(root: string): Record<string, HostEntry> {
  const out: Record<string, HostEntry> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(root, rel)).sort()) {
      const child = rel ? `${rel}/${name}` : name;
      const full = path.join(root, child);
      const st = lstatSync(full);
      if (st.isSymbolicLink()) out[child] = { kind: "symlink", target: readlinkSync(full) };
      else if (st.isDirectory()) {
        out[child] = { kind: "directory" };
        walk(child);
      } else if (st.isFile()) {
        const bytes = readFileSync(full);
        const token = TOKEN.exec(bytes.subarray(0, 120).toString("latin1"))?.[1] ?? null;
        out[child] = { kind: "file", sha256: createHash("sha256").update(bytes).digest("hex"), token };
      }
    }
  };
  walk("");
  return out;
}

export async function collectFinalState(
  prisma: PrismaClient,
  opts: {
    companyId: string;
    instanceRoot: string;
    slots: SlotInfo[];
    baseline: FinalState["baseline"];
    workspaces: string[];
    /** `--provider daytona`: every sandbox the emulator made, as it holds them now. */
    daytonaSandboxes?: DaytonaSandboxFinal[];
    /** `--hosts N`: each host's id, instance root and workspaces. */
    hosts?: FinalHostsInput;
  },
): Promise<FinalState> {
  const where = { companyId: opts.companyId };
  const runs = await prisma.heartbeatRun.findMany({ where, select: { id: true, nativeIssueId: true, status: true, errorCode: true, errorMessage: true, runnerProfileJson: true, agent: { select: { environment: { select: { provider: true } } } } } });
  const results = await prisma.nativeRunResult.findMany({ where: { ...where, schemaStatus: "accepted" }, select: { runId: true } });
  const coordinators = await prisma.nativeRunFinalization.findMany({ where, select: { runId: true, phase: true, committedAt: true, failureCode: true } });
  const ops = await prisma.workspaceOperation.findMany({ where: { ...where, phase: "workspace_finalize" }, select: { runId: true, status: true, metadata: true } });
  const actions = await prisma.issueRecoveryAction.findMany({ where, select: { id: true, runId: true, cause: true, status: true } });
  const leases = await prisma.environmentLease.findMany({ where, select: { id: true, runId: true, status: true, provider: true, providerLeaseId: true, hostId: true, leasePolicy: true, metadata: true, environmentId: true, executionWorkspaceId: true, createdAt: true } });
  // Which leases a run was handed (the dispatcher's lease.acquired event): an acquisition that
  // failed or whose controller died before it named the allocation gave no sandbox to any agent.
  const acquired = await prisma.runEvent.findMany({ where: { ...where, code: "lease.acquired" }, select: { runId: true, payload: true, createdAt: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  const acquisitions = acquired.flatMap((e) => {
    const p = record(e.payload);
    return typeof p.leaseId === "string" ? [{ runId: e.runId, leaseId: p.leaseId, at: e.createdAt.toISOString(), reused: p.reused === true }] : [];
  });
  // Releases by policy: a run whose export failed transiently released its lease as
  // "failed" while its accepted result waited for the retry (the window the held-lease rule guards).
  const releasedEvents = await prisma.runEvent.findMany({ where: { ...where, code: "lease.released" }, select: { runId: true, payload: true, createdAt: true }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  const releases = releasedEvents.flatMap((e) => {
    const p = record(e.payload);
    return typeof p.leaseId === "string" ? [{ runId: e.runId, leaseId: p.leaseId, at: e.createdAt.toISOString(), outcome: String(p.outcome) }] : [];
  });
  const handed = new Set(acquisitions.map((a) => a.leaseId));
  // Leases no agent ever ran on (the requeue after a database outage; attempts.ts).
  const attemptEvents = await prisma.runEvent.findMany({
    where: { ...where, code: { in: ["lease.acquired", "agent.started", "run.requeued"] } },
    select: { runId: true, code: true, payload: true, createdAt: true },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const agentRecorded = new Set(runs.filter((r) => hasAgentProcessRecord(r.runnerProfileJson)).map((r) => r.id));
  const agentNeverStarted = leasesNoAgentRanOn(attemptEvents, leases, handed, agentRecorded);
  const withoutAgent = acquisitionsWithoutAgent(attemptEvents, agentRecorded);
  // What the Retained sandboxes page and `copyback sandboxes list` show (one reader: core's).
  const retained = await listRetainedSandboxes(prisma, { companyId: opts.companyId, limit: 1_000_000 });
  const listed = new Set(retained.sandboxes.map((s) => s.leaseId));
  // Local sandboxes on disk that no live lease row names (a leak nobody could list or discard).
  // (Two-host mode: under every host's instance root; a lease's own sandbox under its host's.)
  const roots = opts.hosts?.hosts.map((h) => h.home) ?? [opts.instanceRoot];
  const rootOf = (hostId: string | null) => opts.hosts?.hosts.find((h) => h.id === hostId)?.home ?? opts.instanceRoot;
  // A lease whose controller died during acquisition has no provider lease id recorded, but its
  // sandbox is named after the lease (local-<lease id>, local-provider.ts) and the sweep resolves it.
  const liveLocal = new Set(leases.filter((l) => l.provider === "local" && l.status !== "destroyed").flatMap((l) => [l.providerLeaseId ?? "", `local-${l.id}`]));
  const strayLocalSandboxes = roots.flatMap((root) => {
    const sandboxesDir = path.join(root, "sandboxes");
    return existsSync(sandboxesDir) ? readdirSync(sandboxesDir).filter((name) => !name.startsWith(".") && !liveLocal.has(name)).map((name) => (roots.length > 1 ? `${root}/${name}` : name)) : [];
  }).sort();
  // Daytona: a sandbox is there while the emulator does not call it destroyed (archived keeps its
  // files). One that no live lease names (by its lease label: a lease whose controller died in the
  // acquisition named no allocation yet) is a stray: it costs and nobody could list or discard it.
  const daytona = new Map((opts.daytonaSandboxes ?? []).map((s) => [s.id, s]));
  const daytonaIdOf = (providerLeaseId: string | null) => /^daytona:([^?]+)/.exec(providerLeaseId ?? "")?.[1] ?? null;
  const liveDaytona = new Set(leases.filter((l) => l.provider === "daytona" && l.status !== "destroyed").map((l) => l.id));
  const strayDaytonaSandboxes = (opts.daytonaSandboxes ?? []).filter((s) => s.state !== "destroyed" && !(s.leaseId && liveDaytona.has(s.leaseId))).map((s) => `${s.id} (lease ${s.leaseId ?? "none"}, ${s.state})`);
  const sandboxExistsOf = (l: (typeof leases)[number]): boolean | null => {
    if (!l.providerLeaseId) return null;
    if (l.provider === "local") return existsSync(path.join(rootOf(l.hostId), "sandboxes", l.providerLeaseId));
    if (l.provider !== "daytona" || !opts.daytonaSandboxes) return null;
    const id = daytonaIdOf(l.providerLeaseId);
    const sandbox = id ? daytona.get(id) : undefined;
    return sandbox !== undefined && sandbox.state !== "destroyed";
  };
  const host: FinalState["host"] = {};
  for (const ws of opts.workspaces) host[ws] = scanHost(ws);
  return {
    slots: opts.slots,
    runs: runs.map((r) => ({ id: r.id, issueId: r.nativeIssueId, status: r.status, errorCode: r.errorCode, errorMessage: r.errorMessage, provider: providerOf(r.agent.environment?.provider) })),
    acceptedResults: results.map((r) => ({ runId: r.runId })),
    coordinators: coordinators.map((c) => ({ runId: c.runId, phase: c.phase, committedAt: c.committedAt?.toISOString() ?? null, failureCode: c.failureCode })),
    finalizeOps: ops.map((o) => {
      const m = (o.metadata ?? {}) as Record<string, unknown>;
      const written = record(m.changes).written;
      return {
        runId: o.runId,
        status: o.status,
        stage: typeof m.stage === "string" ? m.stage : null,
        omitted: m.omitted === true,
        ...(Array.isArray(written) ? { written: written.filter((w): w is string => typeof w === "string") } : {}),
      };
    }),
    actions: actions.map((a) => ({ id: a.id, runId: a.runId, cause: a.cause, status: a.status })),
    leases: leases.map((l) => {
      const sandboxExists = sandboxExistsOf(l);
      return {
        id: l.id,
        runId: l.runId,
        status: l.status,
        provider: l.provider,
        providerLeaseId: l.providerLeaseId,
        sandboxExists,
        handedToRun: handed.has(l.id),
        agentNeverStarted: agentNeverStarted.has(l.id),
        destroyPending: record(l.metadata).sandboxDestroy != null,
        stoppedAndRetained: record(l.metadata).sandboxStopAndRetainReceipt != null,
        leasePolicy: l.leasePolicy,
        retainedListed: listed.has(l.id),
        discardedByOperator: l.status === "destroyed" && record(record(l.metadata).sandboxDestructionReceipt).reason === OPERATOR_DISCARD_REASON,
        // Any Discard of the harness's operator still on a lease that is not destroyed
        // (before or after its destroy: the sweep finishes both), whether its sandbox is gone or not.
        discardUnrecorded: l.status !== "destroyed" && record(record(l.metadata).sandboxDiscard).reason === OPERATOR_DISCARD_REASON,
        environmentId: l.environmentId,
        executionWorkspaceId: l.executionWorkspaceId,
      };
    }),
    acquisitions: acquisitions.map((a) => (withoutAgent.has(acquisitionKey(a.runId, a.leaseId, a.at)) ? { ...a, noAgentRan: true } : a)),
    releases,
    strayLocalSandboxes,
    ...(opts.daytonaSandboxes ? { strayDaytonaSandboxes } : {}),
    host,
    baseline: opts.baseline,
    ...(opts.hosts ? { hosts: await collectHosts(prisma, opts.companyId, opts.hosts, leases) } : {}),
  };
}

/** Two-host mode: each host's id, root and workspaces (the checker's hosts.ts judges with them). */
export interface FinalHostsInput {
  hosts: { id: string; home: string; workspaces: string[] }[];
}

/** Which host each run's task's workspace is bound to, each recorded claim's host, each local lease's host and where its sandbox lies. */
async function collectHosts(prisma: PrismaClient, companyId: string, input: FinalHostsInput, leases: readonly { id: string; provider: string; providerLeaseId: string | null; hostId: string | null }[]): Promise<FinalHosts> {
  const bound = await prisma.$queryRaw<{ id: string; host_id: string | null; host_path: string | null }[]>`
    SELECT r.id::text AS id, w.host_id, w.host_path FROM heartbeat_runs r
    JOIN issues i ON i.id = r.native_issue_id LEFT JOIN execution_workspaces w ON w.id = i.execution_workspace_id
    WHERE r.company_id = ${companyId}::uuid`;
  const started = await prisma.activityLog.findMany({ where: { companyId, action: "run.started", entityType: "run" }, select: { entityId: true, details: true } });
  return {
    hosts: input.hosts,
    runHost: Object.fromEntries(bound.map((r) => [r.id, r.host_id])),
    runWorkspace: Object.fromEntries(bound.flatMap((r) => (r.host_path !== null ? [[r.id, r.host_path]] : []))),
    claims: started.flatMap((a) => (a.entityId ? [{ runId: a.entityId, hostId: typeof record(a.details).hostId === "string" ? (record(a.details).hostId as string) : null }] : [])),
    leases: leases
      .filter((l) => l.provider === "local")
      .map((l) => ({
        leaseId: l.id,
        hostId: l.hostId,
        sandboxOn: input.hosts.filter((h) => [l.providerLeaseId, `local-${l.id}`].some((name) => name && existsSync(path.join(h.home, "sandboxes", name)))).map((h) => h.id),
      })),
  };
}
