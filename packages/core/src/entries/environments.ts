// Creating environments and pointing agents at them (issue 21 part 5): the services the CLI and
// the console's Environments page share, and the pure decisions behind them.
export { decideAgentEnvironment, type AgentEnvironmentDecision, type AgentEnvironmentSnapshot } from "../environments/agent-environment-policy";
export { createEnvironment, type CreatedEnvironment, type CreateEnvironmentInput } from "../environments/create-environment";
export { BUILTIN_PLUGINS, CREATABLE_PROVIDERS, decideNewEnvironment, MAX_ENVIRONMENT_NAME, type NewEnvironmentDecision, type NewEnvironmentRequest } from "../environments/new-environment";
export { setAgentEnvironment, type SetAgentEnvironmentInput, type SetAgentEnvironmentResult } from "../environments/set-agent-environment";
