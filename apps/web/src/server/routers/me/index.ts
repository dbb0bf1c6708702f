import { getMe } from "./get";

export const meRouter = { get: getMe };
