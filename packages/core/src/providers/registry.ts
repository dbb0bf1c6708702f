// The registry of provider plugins by plugin id. A lease records the plugin id it was acquired
// with, and every later call for that lease goes to exactly that plugin (R-EX-6): a plugin with
// the same provider name never takes over, and a missing plugin is "unavailable" (callers defer
// without spending an attempt), never replaced.
import { DomainError } from "../errors";
import type { EnvironmentProvider, ProviderCapability } from "./types";

/** Which operation serves each capability; a plugin must both advertise it and implement it. */
const OPERATION_OF: Record<ProviderCapability, keyof EnvironmentProvider> = {
  acquire: "acquire",
  exec: "exec",
  exportWorkspace: "exportWorkspace",
  exportDelta: "exportDelta",
  // A property of the export itself: the export is the operation it qualifies.
  exportWhileStopped: "exportWorkspace",
  salvageExport: "salvageExport",
  seedWorkspace: "seedWorkspace",
  environmentStopLease: "stopLease",
  resume: "resume",
  destroy: "destroy",
  inspect: "inspect",
  // Both operations are needed; the read is what recovery relies on (the write is checked where it is used).
  workspaceSentinel: "readWorkspaceSentinel",
  // R-DT-1: both operations are needed; the read-back is what the stop relies on.
  autoDeletePolicy: "readAutoDeletePolicy",
  placeInputs: "placeInputs",
  measureSandbox: "measureSandbox",
  agentPack: "placeAgentPack",
  credentialCheck: "checkCredentials",
};

/** The provider operation of a capability (every one is named after its capability but the stop and exportWhileStopped). */
type OperationOf<C extends ProviderCapability> = C extends "environmentStopLease"
  ? "stopLease"
  : C extends "exportWhileStopped"
    ? "exportWorkspace"
  : C extends "workspaceSentinel"
    ? "readWorkspaceSentinel" | "writeWorkspaceSentinel"
    : C extends "autoDeletePolicy"
      ? "readAutoDeletePolicy" | "disableAutoDelete"
      : C extends "agentPack"
        ? "placeAgentPack"
        : C extends "credentialCheck"
          ? "checkCredentials"
          : C & keyof EnvironmentProvider;

/** Whether the plugin advertises `capability` and implements its operation (a type guard). */
export function hasCapability<C extends ProviderCapability>(
  plugin: EnvironmentProvider,
  capability: C,
): plugin is EnvironmentProvider & Required<Pick<EnvironmentProvider, OperationOf<C>>> {
  if (capability === "workspaceSentinel" && typeof plugin.writeWorkspaceSentinel !== "function") return false;
  if (capability === "autoDeletePolicy" && typeof plugin.disableAutoDelete !== "function") return false;
  return plugin.capabilities.has(capability) && typeof plugin[OPERATION_OF[capability]] === "function";
}

/** R-EX-6: refuses a capability the plugin does not advertise (or advertises without the operation). */
export function requireCapability(plugin: EnvironmentProvider, capability: ProviderCapability): void {
  if (hasCapability(plugin, capability)) return;
  throw new DomainError(
    "conflict",
    "provider_capability_missing",
    `The provider plugin ${plugin.pluginId} does not support ${capability}.`,
    { pluginId: plugin.pluginId, capability },
  );
}

export class ProviderRegistry {
  private readonly plugins = new Map<string, EnvironmentProvider>();

  register(plugin: EnvironmentProvider): void {
    if (this.plugins.has(plugin.pluginId)) {
      throw new DomainError("invalid", "provider_plugin_duplicate", `A provider plugin ${plugin.pluginId} is already registered.`, {
        pluginId: plugin.pluginId,
      });
    }
    this.plugins.set(plugin.pluginId, plugin);
  }

  get(pluginId: string): EnvironmentProvider | undefined {
    return this.plugins.get(pluginId);
  }

  /** The plugins registered, in registration order. */
  list(): EnvironmentProvider[] {
    return [...this.plugins.values()];
  }

  /** R-EX-6: exactly the plugin pinned on the lease, or a typed refusal. */
  forLease(lease: { pluginId: string; provider: string }): EnvironmentProvider {
    const plugin = this.plugins.get(lease.pluginId);
    if (!plugin) {
      throw new DomainError("unavailable", "provider_plugin_unavailable", `The provider plugin ${lease.pluginId} is not available.`, {
        pluginId: lease.pluginId,
        provider: lease.provider,
      });
    }
    if (plugin.provider !== lease.provider) {
      throw new DomainError(
        "conflict",
        "provider_plugin_mismatch",
        `The provider plugin ${lease.pluginId} serves ${plugin.provider}, not ${lease.provider}.`,
        { pluginId: lease.pluginId, provider: lease.provider, pluginProvider: plugin.provider },
      );
    }
    return plugin;
  }

  requireCapability(plugin: EnvironmentProvider, capability: ProviderCapability): void {
    requireCapability(plugin, capability);
  }
}
