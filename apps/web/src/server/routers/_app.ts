import { createCallerFactory, router } from "~/server/trpc";
import { healthRouter } from "./health";
import { issuesRouter } from "./issues";

export const appRouter = router({
  health: healthRouter,
  issues: issuesRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
