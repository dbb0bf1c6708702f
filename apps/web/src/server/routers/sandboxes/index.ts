import { discardSandboxProcedure } from "./discard";
import { listRetainedSandboxesProcedure } from "./list-retained";

export const sandboxesRouter = {
  listRetained: listRetainedSandboxesProcedure,
  discard: discardSandboxProcedure,
};
