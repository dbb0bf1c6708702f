import { listAgents } from "./list";
import { setAgentEnvironmentProcedure } from "./set-environment";

export const agentsRouter = { list: listAgents, setEnvironment: setAgentEnvironmentProcedure };
