import { getAgentOutputRoute } from "~/server/rest/handlers/get-agent-output";

export const dynamic = "force-dynamic";
export const GET = getAgentOutputRoute.handle;
