// Provider plugins: the contract's types, the registry, the local provider and its isolation, and
// the Daytona provider (for the torture suite, E2E and the live test, which build their own).
export { createDaytonaProvider, type DaytonaProviderOptions } from "../providers/daytona/daytona-provider";
export { parseDaytonaConfig, type DaytonaEnvironmentConfig } from "../providers/daytona/config";
export { daytonaDashboardLink, type DaytonaDashboardLink } from "../providers/daytona/dashboard";
export { createDefaultRegistry } from "../providers/default-registry";
export {
  environmentsView,
  type EnvironmentConfigView,
  type EnvironmentCredentialView,
  type EnvironmentRow,
  type EnvironmentView,
} from "../providers/environment-view";
export { diagnoseBubblewrap, usableBubblewrap } from "../providers/local/bubblewrap";
export { hostSearchPath } from "../providers/local/env";
export {
  isolationReport,
  type IsolationReport,
  isolationWarning,
  notIsolatedReason,
  readIsolationReport,
  writeIsolationReport,
} from "../providers/local/isolation-report";
export { createLocalProvider } from "../providers/local/local-provider";
export { hasCapability, ProviderRegistry } from "../providers/registry";
export type { EnvironmentProvider, LeaseHandle } from "../providers/types";
export { joinWorkerCgroup, workerCgroupPlace, WORKER_CGROUP_PREFIX, type JoinedWorkerCgroup } from "../providers/local/worker-cgroup";
