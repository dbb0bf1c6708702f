import { createCallerFactory, router } from "~/server/trpc";
import { activityRouter } from "./activity";
import { agentsRouter } from "./agents";
import { companiesRouter } from "./companies";
import { healthRouter } from "./health";
import { issuesRouter } from "./issues";
import { membersRouter } from "./members";
import { runsRouter } from "./runs";

export const appRouter = router({
  activity: activityRouter,
  agents: agentsRouter,
  companies: companiesRouter,
  health: healthRouter,
  issues: issuesRouter,
  members: membersRouter,
  runs: runsRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
