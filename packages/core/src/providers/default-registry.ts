// The plugins every install has: `builtin.local` (sandboxes under the instance root),
// `builtin.fake` (in memory, R-SO-3) and `builtin.daytona` (Daytona's cloud, reached with the key
// in the variable each environment names; an install without one just never acquires there).
// Other plugins are registered next to them. The Daytona emulator is a test tool and is never
// registered here (packages/core/test/support/daytona/).
import { createDaytonaProvider } from "./daytona/daytona-provider";
import { createFakeProvider } from "./fake/fake-provider";
import { createLocalProvider, type LocalIsolation } from "./local/local-provider";
import { instrumentProvider } from "./instrument-provider";
import { ProviderRegistry } from "./registry";

export interface DefaultRegistryOptions {
  instanceRoot: string;
  /** The local provider's isolation (default "auto": bubblewrap where it works). */
  localIsolation?: LocalIsolation;
  /** The Daytona plugin's wait for a lifecycle move to settle (default 300 s: daytona-provider.ts). */
  daytonaLifecycleTimeoutSec?: number;
}

export function createDefaultRegistry(options: DefaultRegistryOptions): ProviderRegistry {
  const registry = new ProviderRegistry();
  // Calls and failures by plugin feed the metrics (providers/instrument-provider.ts).
  registry.register(instrumentProvider(createLocalProvider({ instanceRoot: options.instanceRoot, isolation: options.localIsolation })));
  registry.register(instrumentProvider(createFakeProvider({ measureSandbox: true })));
  registry.register(instrumentProvider(createDaytonaProvider({ instanceRoot: options.instanceRoot, ...(options.daytonaLifecycleTimeoutSec !== undefined ? { lifecycleTimeoutSec: options.daytonaLifecycleTimeoutSec } : {}) })));
  return registry;
}
