"use client";

// The task's recovery (recovery.forIssue) for the client components of the task page: the notice
// and the agent panel read the same query, so one fetch serves both, and <LiveUpdates> refetches
// it when a recovery action of the company changes (the `recovery` router's queries).
import { useQuery } from "@tanstack/react-query";
import type { RouterOutputs } from "~/components/trpc-types";
import { useTRPC } from "~/trpc/react";

export type TaskRecovery = RouterOutputs["recovery"]["forIssue"];

/** null when the page could not read it (then nothing is shown and nothing is refused here). */
export function useTaskRecovery(companyId: string, issueId: string, initial: TaskRecovery | null): TaskRecovery | null {
  const trpc = useTRPC();
  const { data } = useQuery({
    ...trpc.recovery.forIssue.queryOptions({ companyId, issueId }),
    ...(initial ? { initialData: initial } : {}),
    enabled: initial !== null,
  });
  return data ?? initial;
}
