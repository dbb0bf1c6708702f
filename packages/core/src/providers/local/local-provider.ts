// The `local` provider (DESIGN.md section 4): a sandbox is a directory under the instance root,
// owned by its lease (local-sandboxes.ts); the agent is a real process group in it, isolated with
// bubblewrap where that works. Files are never shared between leases: an existing directory is
// only ever taken back by the lease whose identity file it holds. Each capability lives in the
// file named for it; this one wires them to one instance root and plugin id.
import {
  PROVIDER_CAPABILITIES,
  type AgentPackFile,
  type EnvironmentProvider,
  type ExecRequest,
  type ExecResult,
  type LeaseHandle,
  type MeasureRequest,
  type PlacedAgentPack,
  type SandboxMeasurement,
} from "../types";
import { acquireSandbox } from "./acquire-sandbox";
import { hostSearchPath } from "./env";
import { checkExecRequest } from "./exec-environment";
import { exportFaults } from "./export-faults";
import { bubblewrapFor, type LocalIsolation } from "./isolation-choice";
import { localExec } from "./local-exec";
import { localSandboxes, realWorkspace } from "./local-sandboxes";
import { KILL_GRACE_MS } from "./process-group";
import { sandboxLifecycle } from "./sandbox-lifecycle";
import { placeLocalAgentPack } from "./sandbox-pack";
import { measureTree } from "./sandbox-size";
import { workspaceExports } from "./workspace-exports";
import { workspaceSeed } from "./workspace-seed";
import { workspaceSentinel } from "./workspace-sentinel";

export type { LocalIsolation } from "./isolation-choice";

export interface LocalProviderOptions {
  instanceRoot: string;
  pluginId?: string;
  /** "auto" (default): bubblewrap when it works here; "none": a plain process group; "bubblewrap": required. */
  isolation?: LocalIsolation;
  /** PATH for agents and for finding bwrap (default: the controller's PATH). */
  searchPath?: string;
  /** SIGTERM to SIGKILL (default 2 s). */
  killGraceMs?: number;
}

export function createLocalProvider(options: LocalProviderOptions): EnvironmentProvider {
  const pluginId = options.pluginId ?? "builtin.local";
  const isolation = options.isolation ?? "auto";
  const searchPath = options.searchPath ?? hostSearchPath();
  const graceMs = options.killGraceMs ?? KILL_GRACE_MS;
  const sandboxes = localSandboxes(options.instanceRoot, pluginId);
  const faults = exportFaults();

  async function exec(lease: LeaseHandle, request: ExecRequest): Promise<ExecResult> {
    checkExecRequest(request);
    const { layout, record, root } = await sandboxes.open(lease);
    const bwrap = await bubblewrapFor(record.isolation, searchPath);
    return localExec({ layout, identity: record, instanceRoot: root, searchPath, bwrap, graceMs }, request);
  }

  /**
   * Capability `measureSandbox` (sandbox-size.ts): the whole sandbox directory and its workspace
   * in one lstat walk, links never followed, within the budget (a lower bound past it).
   */
  async function measureSandbox(lease: LeaseHandle, request: MeasureRequest): Promise<SandboxMeasurement> {
    const { layout } = await sandboxes.open(lease);
    await realWorkspace(layout);
    const measured = await measureTree(layout.root, { budget: request.budget, part: layout.workspace, ...(request.signal ? { signal: request.signal } : {}) });
    return { workspace: measured.part, sandbox: measured.total, lowerBound: measured.lowerBound };
  }

  /** R-PV-1 (capability `agentPack`): the pack in control/pack/, outside the exported workspace. */
  async function placeAgentPack(lease: LeaseHandle, files: readonly AgentPackFile[]): Promise<PlacedAgentPack> {
    const { layout } = await sandboxes.open(lease);
    return placeLocalAgentPack(layout, files);
  }

  return {
    pluginId,
    provider: "local",
    // Issue 23: a local sandbox is a directory and process groups of this host.
    hostLocal: true,
    // R-DT-1: a local sandbox is never deleted behind the controller: no auto-delete policy to disable.
    capabilities: new Set(PROVIDER_CAPABILITIES.filter((c) => c !== "autoDeletePolicy")),
    acquire: (request) => acquireSandbox(sandboxes, { isolation, searchPath, faults }, request),
    exec,
    ...workspaceExports(sandboxes, faults),
    ...workspaceSeed(sandboxes),
    measureSandbox,
    placeAgentPack,
    ...sandboxLifecycle(sandboxes, graceMs),
    ...workspaceSentinel(sandboxes),
  };
}
