import { listAgents } from "./list";

export const agentsRouter = { list: listAgents };
