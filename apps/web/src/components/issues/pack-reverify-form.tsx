"use client";

// R-PV-1: the agent-pack verification hold's form, under Recovery details only (the server sends
// packHold to board operators with runtime:manage). It lists the reads that ended without an
// answer (in words) and asks, with a note on what was restored, for the pack to be verified again:
// recovery.resolve with outcome "reverify" (the same core service as the REST route and the CLI),
// the task's status unchanged, the held run with its queued status and no lease. The same run then
// reads its pack again before its first turn; nothing else changes. A run that was stopped
// meanwhile is not held any more: the form then closes the hold with the cancelled disposition.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { RouterOutputs } from "~/components/trpc-types";
import { useTRPC } from "~/trpc/react";

type Details = NonNullable<RouterOutputs["recovery"]["forIssue"]["details"]>;
type PackHold = NonNullable<Details[number]["packHold"]>;

export function PackReverifyForm({ companyId, issueId, actionId, hold }: { companyId: string; issueId: string; actionId: string; hold: PackHold }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [note, setNote] = useState("");
  const resolve = useMutation(
    trpc.recovery.resolve.mutationOptions({
      onSuccess: async () => {
        setNote("");
        await queryClient.invalidateQueries({ queryKey: trpc.recovery.pathKey() });
      },
    }),
  );
  // A held run is queued; once it was stopped (cancelled), the hold is closed deliberately instead.
  const held = hold.runStatus === "queued";
  const ready = note.trim() !== "";
  return (
    <form
      className="space-y-3 rounded-md border border-slate-200 bg-white p-3"
      data-testid="pack-reverify-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (!ready || resolve.isPending) return;
        resolve.mutate({
          companyId,
          issueId,
          actionId,
          outcome: held ? "reverify" : "cancelled",
          sourceIssueStatus: hold.sourceIssueStatus,
          executionReconciliation: { runId: hold.runId, leaseId: null, runStatus: hold.runStatus, noExternalActionsPerformed: false },
          note,
        });
      }}
    >
      <p className="text-sm font-medium text-slate-800">
        Verify the agent pack again ({hold.pack.runtime} {hold.pack.version})
      </p>
      <ul className="list-disc pl-5 text-xs text-slate-600" data-testid="pack-reverify-reads">
        {hold.reads.map((read) => (
          <li key={`${read.at}-${read.reason}`}>
            {read.reasonInWords} ({`${read.at.slice(0, 16).replace("T", " ")} UTC`})
          </li>
        ))}
      </ul>
      <p className="text-xs text-slate-600">
        {hold.runStatus === "queued"
          ? "The run's agent never started. Once the environment's provider answers again, the same run checks its agent pack again before its first turn."
          : `The run is ${hold.runStatus}: there is nothing to verify again. Closing this action with a note records the cancelled disposition and lets the task's agent be woken again.`}
      </p>
      <label className="block space-y-1">
        <span className="text-xs font-medium uppercase tracking-wide text-slate-500">{held ? "What was restored" : "Note"}</span>
        <textarea className="field w-full" rows={2} data-testid="pack-reverify-note" value={note} onChange={(event) => setNote(event.target.value)} />
      </label>
      <div className="flex items-center gap-3">
        <button type="submit" className="btn btn-primary" data-testid="pack-reverify-submit" disabled={!ready || resolve.isPending}>
          {held ? "Verify again" : "Close the hold"}
        </button>
        {resolve.isSuccess ? (
          <span role="status" className="text-sm text-emerald-700" data-testid="pack-reverify-result">
            {held ? "The run will check its agent pack again." : "Closed."}
          </span>
        ) : null}
        {resolve.error ? (
          <span role="alert" className="text-sm text-red-700" data-testid="pack-reverify-error">
            {resolve.error.message}
          </span>
        ) : null}
      </div>
    </form>
  );
}
