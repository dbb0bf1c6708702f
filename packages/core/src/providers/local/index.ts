// The built-in local provider: sandboxes under the instance root, real process groups, bubblewrap where it works.
export { createLocalProvider, type LocalIsolation, type LocalProviderOptions } from "./local-provider";
export { localEnvironmentConfig, parseLocalConfig, type LocalEnvironmentConfig } from "./config";
export { sandboxLayout, providerLeaseIdOf, type SandboxLayout } from "./sandbox-layout";
export { MAX_RESULT_FILE_BYTES } from "./result-file";
export { BUBBLEWRAP_MISSING_REASON, diagnoseBubblewrap, usableBubblewrap, type BubblewrapDiagnosis } from "./bubblewrap";
export { isolationReport, isolationWarning, notIsolatedReason, readIsolationReport, writeIsolationReport, type IsolationReport } from "./isolation-report";
export { hostSearchPath } from "./env";
