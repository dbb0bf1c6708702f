// Looking up the plugin pinned on a lease and asking it for a capability, as typed results: the
// release and reuse paths must turn "no such plugin" or "no such capability" into a pending or
// skipped lease, never into a fallback call (R-EX-6).
import { isDomainError } from "../errors";
import type { EnvironmentProvider, ProviderCapability } from "../providers/types";
import type { LeaseProviderRegistry } from "./lease-types";

export type PluginLookup =
  | { kind: "found"; plugin: EnvironmentProvider }
  | { kind: "unavailable"; code: "provider_plugin_unavailable" | "provider_plugin_mismatch"; message: string };

/** R-EX-6: exactly the plugin recorded on the lease; another plugin of the same provider never serves it. */
export function pluginForLease(registry: LeaseProviderRegistry, lease: { pluginId: string; provider: string }): PluginLookup {
  let plugin: EnvironmentProvider;
  try {
    plugin = registry.forLease(lease);
  } catch (error) {
    if (isDomainError(error) && (error.code === "provider_plugin_unavailable" || error.code === "provider_plugin_mismatch")) {
      return { kind: "unavailable", code: error.code, message: error.message };
    }
    throw error;
  }
  // Checked here too, so a registry that resolved loosely still cannot hand over another plugin.
  if (plugin.pluginId !== lease.pluginId || plugin.provider !== lease.provider) {
    return {
      kind: "unavailable",
      code: "provider_plugin_mismatch",
      message: `Lease is pinned to ${lease.pluginId} (${lease.provider}); the registry returned ${plugin.pluginId} (${plugin.provider}).`,
    };
  }
  return { kind: "found", plugin };
}

/** Whether the plugin advertises `capability` and implements its method. */
export function hasCapability<C extends ProviderCapability>(
  plugin: EnvironmentProvider,
  capability: C,
): plugin is EnvironmentProvider & Required<Pick<EnvironmentProvider, MethodOf<C>>> {
  return plugin.capabilities.has(capability) && typeof plugin[METHOD[capability]] === "function";
}

type MethodOf<C extends ProviderCapability> = (typeof METHOD)[C];

const METHOD = {
  acquire: "acquire",
  exec: "exec",
  exportWorkspace: "exportWorkspace",
  salvageExport: "salvageExport",
  seedWorkspace: "seedWorkspace",
  environmentStopLease: "stopLease",
  resume: "resume",
  destroy: "destroy",
  inspect: "inspect",
} as const satisfies Record<ProviderCapability, keyof EnvironmentProvider>;
