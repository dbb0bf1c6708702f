import { createCallerFactory, router } from "~/server/trpc";
import { companiesRouter } from "./companies";
import { healthRouter } from "./health";
import { issuesRouter } from "./issues";

export const appRouter = router({
  companies: companiesRouter,
  health: healthRouter,
  issues: issuesRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
