import { getHealth } from "./get";

export const healthRouter = { get: getHealth };
