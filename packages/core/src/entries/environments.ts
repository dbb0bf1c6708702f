// Creating environments and pointing agents at them (issue 21 part 5): the services the CLI and
// the console's Environments page share, and the pure decisions behind them.
export { decideAgentEnvironment, type AgentEnvironmentDecision, type AgentEnvironmentSnapshot } from "../environments/agent-environment-policy";
export { createEnvironment, type CreatedEnvironment, type CreateEnvironmentInput } from "../environments/create-environment";
export { BUILTIN_PLUGINS, CREATABLE_PROVIDERS, decideNewEnvironment, MAX_ENVIRONMENT_NAME, type NewEnvironmentDecision, type NewEnvironmentRequest } from "../environments/new-environment";
export { setAgentEnvironment, type SetAgentEnvironmentInput, type SetAgentEnvironmentResult } from "../environments/set-agent-environment";
// The policies a form offers (the schema's enum, leases/lease-types.ts).
export { LEASE_POLICIES, type LeasePolicy } from "../leases/lease-types";
