import { createEnvironmentProcedure } from "./create";
import { listEnvironmentsProcedure } from "./list";

export const environmentsRouter = {
  list: listEnvironmentsProcedure,
  create: createEnvironmentProcedure,
};
