// The `daytona` provider (DESIGN.md section 4): sandboxes in Daytona, through its official SDK
// (`@daytonaio/sdk`, pinned). Each capability lives in the file named for it; this one wires them
// to one plugin id, one staging directory and the controller's environment (the API key's
// variable is named by each environment's config, config.ts).
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { EnvironmentProvider, ProviderCapability } from "../types";
import { acquireSandbox } from "./acquire";
import type { BackoffPolicy } from "./backoff";
import { processVariables, type VariableSource } from "./credentials";
import { checkCredentials } from "./credential-check";
import { exportDelta } from "./delta-export";
import { execInSandbox } from "./exec";
import { exportWorkspace } from "./export";
import { placeInputs } from "./inputs";
import { daytonaLifecycle } from "./lifecycle";
import { measureSandbox } from "./measure";
import { placeAgentPack } from "./pack";
import { DaytonaSandboxes } from "./sandboxes";
import { salvageExport } from "./salvage";
import { seedWorkspace } from "./seed";
import { daytonaSentinel } from "./sentinel";

export interface DaytonaProviderOptions {
  /** Seed archives are spooled and validated under `<instanceRoot>/staging/daytona`. */
  instanceRoot: string;
  pluginId?: string;
  /** Where API keys are read from (default: the controller's environment). */
  variables?: VariableSource;
  backoff?: BackoffPolicy;
  random?: () => number;
  lifecycleTimeoutSec?: number;
  transferTimeoutSec?: number;
}

/**
 * What this plugin offers, named one by one (a capability added to the contract is not offered
 * until it is implemented here); a caller that needs another gets a typed refusal (R-EX-6).
 * R-DT-1: Daytona deletes stopped sandboxes on its own, so autoDeletePolicy is advertised.
 */
const OFFERED: readonly ProviderCapability[] = [
  "acquire",
  "exec",
  "exportWorkspace",
  "exportDelta",
  "salvageExport",
  "seedWorkspace",
  "environmentStopLease",
  "resume",
  "destroy",
  "inspect",
  "workspaceSentinel",
  "autoDeletePolicy",
  "placeInputs",
  "measureSandbox",
  "agentPack",
  "credentialCheck",
];

export function createDaytonaProvider(options: DaytonaProviderOptions): EnvironmentProvider {
  const pluginId = options.pluginId ?? "builtin.daytona";
  const sandboxes = new DaytonaSandboxes({
    pluginId,
    variables: options.variables ?? processVariables,
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.random ? { random: options.random } : {}),
    stagingDir: join(options.instanceRoot, "staging", "daytona"),
    lifecycleTimeoutSec: options.lifecycleTimeoutSec ?? 300,
    transferTimeoutSec: options.transferTimeoutSec ?? 1800,
  });
  return {
    pluginId,
    provider: "daytona",
    capabilities: new Set(OFFERED),
    acquire: (request) => acquireSandbox(sandboxes, request),
    exec: (lease, request) => execInSandbox(sandboxes, lease, request),
    exportWorkspace: (lease, opts) => exportWorkspace(sandboxes, lease, opts),
    exportDelta: (lease, request) => exportDelta(sandboxes, lease, request),
    salvageExport: (lease, opts) => salvageExport(sandboxes, lease, opts),
    seedWorkspace: (lease, archive: Readable) => seedWorkspace(sandboxes, lease, archive),
    placeInputs: (lease, inputs) => placeInputs(sandboxes, lease, inputs),
    measureSandbox: (lease, request) => measureSandbox(sandboxes, lease, request),
    placeAgentPack: (lease, files) => placeAgentPack(sandboxes, lease, files),
    checkCredentials: (config) => checkCredentials(sandboxes, config),
    ...daytonaLifecycle(sandboxes),
    ...daytonaSentinel(sandboxes),
  };
}
