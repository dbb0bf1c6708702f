import { createApiKey } from "./create";
import { listApiKeys } from "./list";
import { revokeApiKey } from "./revoke";

export const apiKeysRouter = { list: listApiKeys, create: createApiKey, revoke: revokeApiKey };
