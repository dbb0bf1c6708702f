// The built-in `fake` provider (R-SO-3): sandboxes in memory, no real process or filesystem.
// Its stop is an explicit `stopLease` operation whose receipt says `builtin.stopLease`; the
// receipt models the lifecycle, there is nothing physical to stop. Tests script what a run does
// (exit code, output, result file, workspace changes) and inject faults per operation.
import { randomUUID } from "node:crypto";
import type { Readable } from "node:stream";
import { SALVAGE_INFO_MESSAGE } from "../../copyback/archive/salvage";
import { compileExclude } from "../../copyback/manifest/exclude";
import { DomainError } from "../../errors";
import {
  PROVIDER_CAPABILITIES,
  type AcquireRequest,
  type Allocation,
  type AutoDeletePolicy,
  type DeltaExport,
  type DeltaExportRequest,
  type EnvironmentProvider,
  type ExecRequest,
  type ExecResult,
  type ExportOptions,
  type Inspection,
  type LeaseHandle,
  type MeasureRequest,
  type PlacedInputs,
  type ProviderCapability,
  type SandboxIdentity,
  type SandboxInput,
  type SandboxMeasurement,
  type SandboxSentinel,
  type StopReceipt,
  type StopRequest,
} from "../types";
import { faultsFromConfig, parseFakeConfig, type FakeTurnConfig } from "./config";
import { fakeDeltaExport, seedHashCache } from "./delta-export";
import { configuredTurn, runScript, type FakeExecScript } from "./exec";
import { FakeFaults, type FakeOperation } from "./faults";
import { placeFakeInputs } from "./inputs";
import { measureFakeSandbox } from "./measure";
import { providerLeaseIdOf, sandboxOf as findSandbox, type FakeSandboxStore } from "./sandbox";
import { readWorkspaceTar, workspaceTarStream } from "./virtual-workspace";

export interface FakeProviderOptions {
  pluginId?: string;
  faults?: FakeFaults;
  /** What exec does; by default it exits 0 without output or changes. */
  script?: FakeExecScript;
  /** Capabilities to advertise (default: all). Leave out environmentStopLease to model an older plugin. */
  capabilities?: readonly ProviderCapability[];
  store?: FakeSandboxStore;
  /**
   * The method its stop receipts name. By default `builtin.stopLease` when registered as the
   * built-in provider (`builtin.fake`, R-SO-3), else `environmentStopLease`: under another plugin
   * id the fake stands in for a third-party plugin, whose stop is the environmentStopLease hook.
   * A test may make it claim the other method to model a plugin that lies.
   */
  stopMethod?: StopReceipt["method"];
  /**
   * R-DT-1: model a provider that deletes stopped sandboxes on its own (as Daytona does): new
   * sandboxes start with auto-delete enabled, the provider advertises `autoDeletePolicy`, and a
   * stopped sandbox whose policy is still enabled is deleted by `expireStopped()`. Off by default.
   */
  autoDelete?: boolean;
  /**
   * Offer the delta export (capability `exportDelta`, delta-export.ts). Off by default: the fake's
   * export faults and call counts (`exportWorkspace`) keep meaning the one export a copyback makes.
   */
  exportDelta?: boolean;
  /**
   * Offer `measureSandbox` (the workspace's file bytes and entries, and the whole sandbox's with
   * its inputs). Off by default, like exportDelta, so the call lists of tests that script a stop
   * keep meaning the stop alone; the built-in registration (default-registry.ts) turns it on.
   */
  measureSandbox?: boolean;
}

export interface FakeCall {
  op: FakeOperation;
  leaseId: string | null;
}

export interface FakeProvider extends EnvironmentProvider {
  readonly faults: FakeFaults;
  readonly store: FakeSandboxStore;
  /** Every call that reached the provider, in order (faulted ones included). */
  readonly calls: FakeCall[];
  /** R-DT-1 (autoDelete providers): deletes every stopped sandbox whose auto-delete is still enabled, as the provider's retention job would. */
  expireStopped(): string[];
}

export function createFakeProvider(options: FakeProviderOptions = {}): FakeProvider {
  const pluginId = options.pluginId ?? "builtin.fake";
  const stopMethod = options.stopMethod ?? (pluginId === "builtin.fake" ? "builtin.stopLease" : "environmentStopLease");
  const faults = options.faults ?? new FakeFaults();
  const store: FakeSandboxStore = options.store ?? new Map();
  const calls: FakeCall[] = [];
  // What the environment's config armed for each lease at acquisition (config.ts): its own faults
  // and its scripted turn. Nothing is armed for an environment without them.
  const armed = new Map<string, { faults: FakeFaults | null; turn: FakeTurnConfig | undefined }>();
  const script: FakeExecScript = options.script ?? ((context) => configuredTurn(armed.get(context.lease.leaseId)?.turn, context));

  // The auto-delete model is opt-in: by default the fake deletes nothing behind the caller (R-DT-1).
  // No agentPack: the fake runs no real command, so it could not run the pack's verification read (R-PV-1).
  const capabilities = new Set<ProviderCapability>(
    options.capabilities ??
      PROVIDER_CAPABILITIES.filter((c) => (options.autoDelete === true || c !== "autoDeletePolicy") && (options.exportDelta === true || c !== "exportDelta") && (options.measureSandbox === true || c !== "measureSandbox") && c !== "agentPack"),
  );

  const sandboxOf = (lease: LeaseHandle) => findSandbox(store, pluginId, lease);

  function call<T>(op: FakeOperation, leaseId: string | null, effect: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    calls.push({ op, leaseId });
    const own = leaseId === null ? null : (armed.get(leaseId)?.faults ?? null);
    return faults.run(op, own ? () => own.run(op, effect, signal) : effect, signal);
  }

  const provider: FakeProvider = {
    pluginId,
    provider: "fake",
    capabilities,
    faults,
    store,
    calls,

    async acquire(request: AcquireRequest): Promise<Allocation> {
      if (!armed.has(request.leaseId)) {
        const config = parseFakeConfig(request.config);
        armed.set(request.leaseId, { faults: faultsFromConfig(config.faults), turn: config.turn });
      }
      return call("acquire", request.leaseId, async () => {
        const providerLeaseId = providerLeaseIdOf(request.leaseId);
        // Acquiring the same lease again (after a lost reply) returns the same sandbox.
        const existing = store.get(providerLeaseId);
        if (existing) return { identity: existing.identity, isolated: false };
        const identity = { providerLeaseId, fingerprint: `fake:${randomUUID()}` };
        store.set(providerLeaseId, {
          leaseId: request.leaseId,
          identity,
          state: "running",
          workspace: new Map(),
          lastStop: null,
          ...(options.autoDelete === true ? { autoDelete: "enabled" as const } : {}),
        });
        return { identity, isolated: false };
      });
    },

    exec(lease: LeaseHandle, request: ExecRequest): Promise<ExecResult> {
      return call("exec", lease.leaseId, () => runScript(script, sandboxOf(lease), lease, request), request.signal);
    },

    exportWorkspace(lease: LeaseHandle, opts?: ExportOptions): Promise<Readable> {
      return call(
        "exportWorkspace",
        lease.leaseId,
        async () => {
          const excluded = compileExclude(opts?.exclude ? [...opts.exclude] : undefined);
          return workspaceTarStream(sandboxOf(lease).workspace, (path) => !excluded(path));
        },
        opts?.signal,
      );
    },

    exportDelta(lease: LeaseHandle, request: DeltaExportRequest): Promise<DeltaExport> {
      return call(
        "exportDelta",
        lease.leaseId,
        async () => {
          const sandbox = sandboxOf(lease);
          const own = armed.get(lease.leaseId)?.faults ?? null;
          const corrupt = faults.takeCorruptDelta() || (own?.takeCorruptDelta() ?? false);
          return fakeDeltaExport({ workspace: sandbox.workspace, baseline: request.baseline, exclude: request.exclude, cache: sandbox.hashCache, corrupt });
        },
        request.signal,
      );
    },

    salvageExport(lease: LeaseHandle, opts?: ExportOptions): Promise<{ archive: Readable; message: string }> {
      // The fake's salvage leaves out every link: what it exports can never be unsafe.
      return call(
        "salvageExport",
        lease.leaseId,
        async () => {
          const excluded = compileExclude(opts?.exclude ? [...opts.exclude] : undefined);
          const archive = workspaceTarStream(sandboxOf(lease).workspace, (path, e) => e.kind !== "symlink" && !excluded(path));
          return { archive, message: SALVAGE_INFO_MESSAGE };
        },
        opts?.signal,
      );
    },

    seedWorkspace(lease: LeaseHandle, archive: Readable): Promise<void> {
      return call("seedWorkspace", lease.leaseId, async () => {
        const sandbox = sandboxOf(lease);
        // Parsed (and refused) before anything changes; then the contents are replaced.
        const seeded = await readWorkspaceTar(archive);
        sandbox.workspace.clear();
        for (const [path, entry] of seeded) sandbox.workspace.set(path, entry);
        sandbox.hashCache = seedHashCache(sandbox.workspace);
        // R-RC-5: an earlier run's inputs are not this run's.
        delete sandbox.inputs;
      });
    },

    placeInputs(lease: LeaseHandle, inputs: readonly SandboxInput[]): Promise<PlacedInputs> {
      return call("placeInputs", lease.leaseId, () => placeFakeInputs(sandboxOf(lease), lease, inputs));
    },

    measureSandbox(lease: LeaseHandle, request: MeasureRequest): Promise<SandboxMeasurement> {
      return call(
        "measureSandbox",
        lease.leaseId,
        async () => measureFakeSandbox(sandboxOf(lease), request),
        request.signal,
      );
    },

    stopLease(lease: LeaseHandle, request: StopRequest): Promise<StopReceipt> {
      return call("stopLease", lease.leaseId, async () => {
        const sandbox = sandboxOf(lease);
        const own = armed.get(lease.leaseId)?.faults ?? null;
        const confirmed = !faults.takeUnconfirmedStop() && !(own?.takeUnconfirmedStop() ?? false);
        if (confirmed) sandbox.state = "stopped";
        // R-SO-3: the built-in provider's own stop operation, pinned to this plugin.
        const receipt: StopReceipt = {
          method: stopMethod,
          requestId: request.requestId,
          pluginId,
          providerLeaseId: lease.providerLeaseId,
          confirmed,
          stoppedAt: new Date().toISOString(),
        };
        if (confirmed) {
          sandbox.lastStop = receipt;
          own?.armProbeFailuresOnStop();
        }
        return receipt;
      });
    },

    resume(lease: LeaseHandle, expected: SandboxIdentity): Promise<SandboxIdentity> {
      return call("resume", lease.leaseId, async () => {
        const sandbox = sandboxOf(lease);
        if (sandbox.identity.providerLeaseId !== expected.providerLeaseId || sandbox.identity.fingerprint !== expected.fingerprint) {
          throw new DomainError("conflict", "provider_identity_mismatch", `The sandbox of lease ${lease.leaseId} is not the expected one.`);
        }
        sandbox.state = "running";
        sandbox.lastStop = null;
        return sandbox.identity;
      });
    },

    destroy(lease: LeaseHandle): Promise<void> {
      return call("destroy", lease.leaseId, async () => {
        const sandbox = store.get(lease.providerLeaseId);
        if (sandbox && sandbox.leaseId === lease.leaseId) store.delete(lease.providerLeaseId);
      });
    },

    writeWorkspaceSentinel(lease: LeaseHandle, sentinel: SandboxSentinel): Promise<void> {
      return call("writeWorkspaceSentinel", lease.leaseId, async () => {
        const sandbox = sandboxOf(lease);
        if (sentinel.leaseId !== lease.leaseId || sentinel.providerLeaseId !== lease.providerLeaseId) {
          throw new DomainError("invalid", "provider_sentinel_invalid", `The sentinel does not belong to lease ${lease.leaseId}.`);
        }
        if (sandbox.sentinel) throw new DomainError("conflict", "provider_sentinel_exists", `The sandbox of lease ${lease.leaseId} already has a sentinel.`);
        sandbox.sentinel = { ...sentinel };
      });
    },

    readWorkspaceSentinel(lease: LeaseHandle): Promise<SandboxSentinel | null> {
      return call("readWorkspaceSentinel", lease.leaseId, async () => {
        const sentinel = sandboxOf(lease).sentinel;
        return sentinel ? { ...sentinel } : null;
      });
    },

    disableAutoDelete(lease: LeaseHandle): Promise<void> {
      return call("disableAutoDelete", lease.leaseId, async () => {
        const sandbox = sandboxOf(lease);
        const own = armed.get(lease.leaseId)?.faults ?? null;
        const ignored = faults.takeIgnoredAutoDelete() || (own?.takeIgnoredAutoDelete() ?? false);
        if (!ignored && sandbox.autoDelete !== undefined) sandbox.autoDelete = "disabled";
      });
    },

    readAutoDeletePolicy(lease: LeaseHandle): Promise<AutoDeletePolicy> {
      return call("readAutoDeletePolicy", lease.leaseId, async () => {
        const policy = sandboxOf(lease).autoDelete;
        return { autoDelete: policy ?? "unknown" };
      });
    },

    expireStopped(): string[] {
      const deleted: string[] = [];
      for (const [id, sandbox] of store) {
        if (sandbox.state === "stopped" && sandbox.autoDelete === "enabled") {
          store.delete(id);
          deleted.push(id);
        }
      }
      return deleted;
    },

    inspect(lease: LeaseHandle): Promise<Inspection> {
      return call("inspect", lease.leaseId, async () => {
        const sandbox = store.get(lease.providerLeaseId);
        if (!sandbox || sandbox.leaseId !== lease.leaseId) return { state: "missing", identity: null, processes: [] };
        return { state: sandbox.state, identity: sandbox.identity, processes: [] };
      });
    },
  };

  return provider;
}
