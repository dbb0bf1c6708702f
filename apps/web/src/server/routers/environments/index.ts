import { listEnvironmentsProcedure } from "./list";

export const environmentsRouter = {
  list: listEnvironmentsProcedure,
};
