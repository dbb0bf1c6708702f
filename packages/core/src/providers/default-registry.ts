// The plugins every install has: `builtin.local` (sandboxes under the instance root) and
// `builtin.fake` (in memory, R-SO-3). Other plugins are registered next to them.
import { createFakeProvider } from "./fake/fake-provider";
import { createLocalProvider, type LocalIsolation } from "./local/local-provider";
import { instrumentProvider } from "./instrument-provider";
import { ProviderRegistry } from "./registry";

export interface DefaultRegistryOptions {
  instanceRoot: string;
  /** The local provider's isolation (default "auto": bubblewrap where it works). */
  localIsolation?: LocalIsolation;
}

export function createDefaultRegistry(options: DefaultRegistryOptions): ProviderRegistry {
  const registry = new ProviderRegistry();
  // Calls and failures by plugin feed the metrics (providers/instrument-provider.ts).
  registry.register(instrumentProvider(createLocalProvider({ instanceRoot: options.instanceRoot, isolation: options.localIsolation })));
  registry.register(instrumentProvider(createFakeProvider({ measureSandbox: true })));
  return registry;
}
