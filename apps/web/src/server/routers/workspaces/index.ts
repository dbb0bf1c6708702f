import { getPathHistory } from "./path-history";

export const workspacesRouter = {
  pathHistory: getPathHistory,
};
