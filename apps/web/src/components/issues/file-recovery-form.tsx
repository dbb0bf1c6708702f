"use client";

// The file-recovery form (R-UI-4, R-RR-5, R-FO-5), under Recovery details only: the server sends
// the file holds' sources only to board operators (runtime:manage), so missing role data keeps the
// notice read-only (R-UI-5) and the task conversation never asks its user to certify anything
// (R-UI-2). The operator picks the source (run and allocation) to record, gives the evidence that
// the exact allocation stopped and which files were recovered, and, for a cancelled native run
// only, may confirm that no external actions were performed (unchecked by default: the default
// records files without certifying action outcomes). Changing the selected source clears the
// evidence and the confirmation. It calls recovery.resolve (the same core service as the REST
// route) with the task's status unchanged; it retries nothing and changes neither owner nor status.
// A source whose sandbox was discarded (its files were given up) has nothing left to
// recover: the form then closes the action with the `cancelled` disposition and a note instead.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { RouterOutputs } from "~/components/trpc-types";
import { useTRPC } from "~/trpc/react";

type Details = NonNullable<RouterOutputs["recovery"]["forIssue"]["details"]>;
type Action = Details[number];
type Source = NonNullable<Action["fileSource"]>;

export interface FileRecoveryChoice {
  actionId: string;
  source: Source;
}

/** The file holds the form can record, in the order Recovery details lists them. */
export function fileRecoveryChoices(details: Details): FileRecoveryChoice[] {
  return details.flatMap((action) => (action.fileSource ? [{ actionId: action.actionId, source: action.fileSource }] : []));
}

export function sourceLabel(choice: FileRecoveryChoice): string {
  const allocation = choice.source.providerLeaseId ?? choice.source.leaseId ?? "no allocation recorded";
  return `Run ${choice.source.runId.slice(0, 8)} (${choice.source.runtimeMode}, ${choice.source.runStatus}) · allocation ${allocation}`;
}

interface Draft {
  stopEvidence: string;
  recoveredFiles: string;
  noExternalActions: boolean;
  /** The cancelled disposition's note, for a source whose files were given up. */
  note: string;
}

const EMPTY: Draft = { stopEvidence: "", recoveredFiles: "", noExternalActions: false, note: "" };

/** A fresh draft for a source: a given-up source starts with the discard's reason as its note. */
const draftFor = (source: Source | undefined): Draft => ({ ...EMPTY, note: source?.givenUp ? `The files were given up when the sandbox was discarded: ${source.givenUp.reason}` : "" });

export function FileRecoveryForm({ companyId, issueId, choices }: { companyId: string; issueId: string; choices: FileRecoveryChoice[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [selected, setSelected] = useState<string>(choices[0]?.actionId ?? "");
  const [draft, setDraft] = useState<Draft>(() => draftFor(choices[0]?.source));
  const resolve = useMutation(
    trpc.recovery.resolve.mutationOptions({
      onSuccess: async () => {
        setDraft(draftFor(undefined));
        await queryClient.invalidateQueries({ queryKey: trpc.recovery.pathKey() });
      },
    }),
  );
  const choice = choices.find((c) => c.actionId === selected) ?? choices[0];
  if (!choice) return null;
  const givenUp = choice.source.givenUp;
  const ready = givenUp ? draft.note.trim() !== "" : draft.stopEvidence.trim() !== "" && draft.recoveredFiles.trim() !== "";
  const executionReconciliation = {
    runId: choice.source.runId,
    leaseId: choice.source.leaseId,
    runStatus: choice.source.runStatus,
    noExternalActionsPerformed: !givenUp && choice.source.cancelledNative && draft.noExternalActions,
  };
  const common = { companyId, issueId, actionId: choice.actionId, sourceIssueStatus: choice.source.sourceIssueStatus, executionReconciliation };

  return (
    <form
      className="space-y-3 rounded-md border border-slate-200 bg-white p-3"
      data-testid="file-recovery-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (!ready || resolve.isPending) return;
        resolve.mutate(
          givenUp
            ? { ...common, outcome: "cancelled", note: draft.note }
            : { ...common, outcome: "restored", workspaceRepairEvidence: { stopEvidence: draft.stopEvidence, recoveredFiles: draft.recoveredFiles } },
        );
      }}
    >
      <p className="text-sm font-medium text-slate-800">{givenUp ? "Close the recovery: the files were given up" : "Record recovered files"}</p>
      {givenUp ? (
        <p className="text-xs text-slate-600" data-testid="file-recovery-given-up">
          The sandbox was discarded on {`${givenUp.at.toISOString().slice(0, 16).replace("T", " ")} UTC`} by {givenUp.byType.replaceAll("_", " ")}, so nothing is left to recover.
          Closing this action records that the recovery was cancelled and lets the agent be woken again. It does not retry the run or change
          the task&apos;s owner or status.
        </p>
      ) : (
        <p className="text-xs text-slate-600">
          Records that the exact allocation stopped and its files were recovered. It does not retry the run, certify actions the agent may
          have taken, or change the task&apos;s owner or status.
        </p>
      )}
      <label className="block space-y-1">
        <span className="text-xs font-medium uppercase tracking-wide text-slate-500">Source</span>
        <select
          className="field w-full"
          data-testid="file-recovery-source"
          value={choice.actionId}
          onChange={(event) => {
            // R-UI-4: another source starts from nothing: its evidence and confirmations are its own.
            setSelected(event.target.value);
            setDraft(draftFor(choices.find((c) => c.actionId === event.target.value)?.source));
            resolve.reset();
          }}
        >
          {choices.map((c) => (
            <option key={c.actionId} value={c.actionId}>
              {sourceLabel(c)}
            </option>
          ))}
        </select>
      </label>
      {givenUp ? (
        <label className="block space-y-1">
          <span className="text-xs font-medium uppercase tracking-wide text-slate-500">Note</span>
          <textarea className="field w-full" rows={2} data-testid="file-recovery-note" value={draft.note} onChange={(event) => setDraft({ ...draft, note: event.target.value })} />
        </label>
      ) : (
        <>
          <label className="block space-y-1">
            <span className="text-xs font-medium uppercase tracking-wide text-slate-500">How the allocation was verified stopped</span>
            <textarea
              className="field w-full"
              rows={2}
              data-testid="file-recovery-stop-evidence"
              value={draft.stopEvidence}
              onChange={(event) => setDraft({ ...draft, stopEvidence: event.target.value })}
            />
          </label>
          <label className="block space-y-1">
            <span className="text-xs font-medium uppercase tracking-wide text-slate-500">Which files were recovered, and where</span>
            <textarea
              className="field w-full"
              rows={2}
              data-testid="file-recovery-recovered-files"
              value={draft.recoveredFiles}
              onChange={(event) => setDraft({ ...draft, recoveredFiles: event.target.value })}
            />
          </label>
          {choice.source.cancelledNative ? (
            <label className="flex items-start gap-2 text-sm text-slate-700">
              <input
                type="checkbox"
                className="mt-0.5"
                data-testid="file-recovery-no-external-actions"
                checked={draft.noExternalActions}
                onChange={(event) => setDraft({ ...draft, noExternalActions: event.target.checked })}
              />
              <span>No external actions were performed (check only if the run history verifies it).</span>
            </label>
          ) : null}
        </>
      )}
      <div className="flex items-center gap-3">
        <button type="submit" className="btn btn-primary" data-testid="file-recovery-submit" disabled={!ready || resolve.isPending}>
          {givenUp ? "Close the recovery" : "Record recovery"}
        </button>
        {resolve.isSuccess ? (
          <span role="status" className="text-sm text-emerald-700" data-testid="file-recovery-result">
            Recorded.
          </span>
        ) : null}
        {resolve.error ? (
          <span role="alert" className="text-sm text-red-700" data-testid="file-recovery-error">
            {resolve.error.message}
          </span>
        ) : null}
      </div>
    </form>
  );
}
