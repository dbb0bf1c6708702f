import { createAgentKey } from "./create";
import { listAgentKeys } from "./list";
import { revokeAgentKey } from "./revoke";

export const agentKeysRouter = { list: listAgentKeys, create: createAgentKey, revoke: revokeAgentKey };
