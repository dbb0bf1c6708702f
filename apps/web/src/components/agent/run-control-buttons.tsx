"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import type { RunStatusValue } from "~/components/ui/run-status-badge";
import { domainCodeOf, userMessageOf } from "~/components/ui/error-message";
import { useTRPC } from "~/trpc/react";
import { decideRunControls } from "./run-controls";

interface Props {
  companyId: string;
  runId: string;
  runStatus: RunStatusValue;
  recovery: "none" | "attention" | "restoring";
  canWrite: boolean;
}

/** Stop (R-RC-7) and Retry (R-RR-7) on the task's latest run; the server decides again on press. */
export function RunControlButtons({ companyId, runId, runStatus, recovery, canWrite }: Props) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [notice, setNotice] = useState<string | null>(null);
  const controls = decideRunControls({ runStatus, recovery, canWrite });
  const refresh = async () => {
    await queryClient.invalidateQueries({ queryKey: trpc.runs.pathKey() });
    router.refresh();
  };
  const stop = useMutation(
    trpc.runs.stop.mutationOptions({
      onSuccess: async (result) => {
        setNotice(
          result.kind === "cancelled"
            ? "The run was cancelled before it started."
            : result.kind === "finalizing"
              ? "The agent had already submitted its result: its process is stopped and the result is still copied back."
              : "Stopping: the agent is stopped and its sandbox kept; the run ends cancelled.",
        );
        await refresh();
      },
    }),
  );
  const retry = useMutation(
    trpc.runs.retry.mutationOptions({
      onSuccess: async () => {
        setNotice("Retry queued a new run.");
        await refresh();
      },
      onError: async (err) => {
        if (domainCodeOf(err) === "recovery_hold_open") await queryClient.invalidateQueries({ queryKey: trpc.recovery.pathKey() });
      },
    }),
  );
  if (!controls.stop && controls.retry.kind === "hidden" && !notice && !stop.error && !retry.error) return null;
  const error = stop.error ?? retry.error;
  return (
    <div className="space-y-2">
      <div className="flex gap-2">
        {controls.stop ? (
          <button
            type="button"
            className="btn btn-secondary"
            data-testid="agent-stop"
            disabled={stop.isPending || stop.isSuccess}
            onClick={() => {
              setNotice(null);
              stop.mutate({ companyId, runId });
            }}
          >
            {stop.isPending ? "Stopping…" : stop.isSuccess ? "Stop requested" : "Stop"}
          </button>
        ) : null}
        {controls.retry.kind !== "hidden" ? (
          <button
            type="button"
            className="btn btn-secondary"
            data-testid="agent-retry"
            disabled={retry.isPending || controls.retry.kind === "disabled"}
            aria-describedby={controls.retry.kind === "disabled" ? "retry-reason" : undefined}
            onClick={() => {
              setNotice(null);
              retry.mutate({ companyId, runId });
            }}
          >
            {retry.isPending ? "Retrying…" : "Retry"}
          </button>
        ) : null}
      </div>
      {controls.retry.kind === "disabled" ? (
        <p id="retry-reason" className="text-xs text-slate-500" data-testid="retry-reason">
          {controls.retry.reason}
        </p>
      ) : null}
      <p aria-live="polite" data-testid="run-control-notice" className={`text-xs ${error ? "text-red-700" : "text-slate-500"}`}>
        {error ? userMessageOf(error) : notice}
      </p>
    </div>
  );
}
