import { createCallerFactory, router } from "~/server/trpc";
import { activityRouter } from "./activity";
import { agentKeysRouter } from "./agentKeys";
import { agentsRouter } from "./agents";
import { apiKeysRouter } from "./apiKeys";
import { companiesRouter } from "./companies";
import { environmentsRouter } from "./environments";
import { healthRouter } from "./health";
import { issuesRouter } from "./issues";
import { meRouter } from "./me";
import { membersRouter } from "./members";
import { recoveryRouter } from "./recovery";
import { runsRouter } from "./runs";
import { sandboxesRouter } from "./sandboxes";
import { workspacesRouter } from "./workspaces";

export const appRouter = router({
  activity: activityRouter,
  agentKeys: agentKeysRouter,
  agents: agentsRouter,
  apiKeys: apiKeysRouter,
  companies: companiesRouter,
  environments: environmentsRouter,
  health: healthRouter,
  issues: issuesRouter,
  me: meRouter,
  members: membersRouter,
  recovery: recoveryRouter,
  runs: runsRouter,
  sandboxes: sandboxesRouter,
  workspaces: workspacesRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
