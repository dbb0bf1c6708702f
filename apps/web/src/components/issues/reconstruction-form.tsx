"use client";

// "Continue from saved sources" (NWF "Continue after confirmed source destruction"; R-UI-3,
// R-RC-1..R-RC-3) in the task's recovery notice. The server's offer (recovery.reconstructionOffer)
// exists only for board operators with `runtime:manage` and only after the exact sandbox's
// destruction was confirmed (R-RC-1: a retained or unverified sandbox gets no offer and keeps the
// export or file-recovery path), so this component decides nothing about eligibility: no offer,
// nothing shown. A recorded intent shows its state instead of the form, never a second form.
//
// The form: the surviving attachments (name, size, short hash), a required description of the
// missing work, and the observed external actions, each with an explicitly chosen outcome and
// optional evidence. Its requestId is made once per opened form, so a double-click or a retry
// adopts the first intent (R-RC-3), and it sends back the status version the viewer saw (a changed
// task is refused, R-RC-2). A refusal is shown inline by its code and nothing typed is lost.
// The pure rules (choices, validation, the body) are in reconstruction-draft.ts.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { Timestamp } from "~/components/format/timestamp";
import type { RouterOutputs } from "~/components/trpc-types";
import { domainCodeOf, userMessageOf } from "~/components/ui/error-message";
import { useTRPC } from "~/trpc/react";
import {
  addOutcomeRow,
  attachmentLabel,
  checkReconstructionDraft,
  EMPTY_DRAFT,
  OUTCOME_CHOICES,
  describeRefusal,
  removeOutcomeRow,
  toggleAttachment,
  updateOutcomeRow,
  withCurrentAttachments,
  type Outcome,
  type ReconstructionDraft,
} from "./reconstruction-draft";

export type ReconstructionOffer = NonNullable<RouterOutputs["recovery"]["reconstructionOffer"]>;
export type ReconstructionIntent = NonNullable<ReconstructionOffer["pendingIntent"]>;

/**
 * The offer for this task, asked only when `enabled` (the caller passes whether the viewer received
 * Recovery details, i.e. holds runtime:manage): others never send the query (R-UI-3, R-UI-5).
 * Live updates refetch it with the rest of the `recovery` router.
 */
export function useReconstructionOffer(companyId: string, issueId: string | undefined, enabled: boolean): ReconstructionOffer | null {
  const trpc = useTRPC();
  const { data } = useQuery({
    ...trpc.recovery.reconstructionOffer.queryOptions({ companyId, issueId: issueId ?? "" }),
    enabled: enabled && issueId !== undefined,
  });
  return data ?? null;
}

/** The notice's part: the recorded intent's state, or the button that opens the form. */
export function ReconstructionOfferPanel({ companyId, issueId, offer }: { companyId: string; issueId: string; offer: ReconstructionOffer }) {
  const [open, setOpen] = useState(false);
  // What this form recorded, shown at once, but only until the offer is read again: from then on
  // the server's offer says whether the intent is still pending. A delivery refused later cancels
  // it, and the offer (no pending intent) brings the button back for a fresh decision (R-RC-5).
  const [recorded, setRecorded] = useState<{ intent: ReconstructionIntent; offer: ReconstructionOffer } | null>(null);
  const intent = offer.pendingIntent ?? (recorded?.offer === offer ? recorded.intent : null);
  if (intent) return <ReconstructionIntentState intent={intent} />;
  if (!open) {
    return (
      <div className="flex flex-wrap items-center justify-between gap-3 rounded-md border border-slate-200 bg-white p-3" data-testid="reconstruction-offer">
        <p className="text-sm text-slate-700">
          This run&apos;s sandbox was destroyed (<Timestamp date={new Date(offer.destroyedAt)} />), so its unsaved work cannot be recovered. The task can
          continue in a fresh session from its saved sources.
        </p>
        <button type="button" className="btn btn-primary" data-testid="reconstruction-open" onClick={() => setOpen(true)}>
          Continue from saved sources
        </button>
      </div>
    );
  }
  return (
    <ReconstructionForm
      companyId={companyId}
      issueId={issueId}
      offer={offer}
      onRecorded={(recordedIntent) => {
        setRecorded({ intent: recordedIntent, offer });
        setOpen(false);
      }}
      onCancel={() => setOpen(false)}
    />
  );
}

/** A recorded intent, calmly: what happens next, nothing to do. */
export function ReconstructionIntentState({ intent }: { intent: ReconstructionIntent }) {
  const count = intent.attachmentHashes.length;
  return (
    <div role="status" className="rounded-md border border-indigo-200 bg-indigo-50 p-3 text-sm text-slate-800" data-testid="reconstruction-intent" data-status={intent.status}>
      <p className="font-medium">
        {intent.status === "delivered"
          ? "Continuing from saved sources: a fresh session has started."
          : intent.status === "cancelled"
            ? "Continuing from saved sources was withdrawn."
            : "Continuing from saved sources: a fresh session will start."}
      </p>
      <p className="mt-1 text-xs text-slate-600">
        Recorded <Timestamp date={new Date(intent.createdAt)} /> with {count} saved {count === 1 ? "attachment" : "attachments"}. The fresh session gets them with their
        hashes to verify before it rebuilds the missing work; the lost edits themselves are not recovered.
      </p>
    </div>
  );
}

export function ReconstructionForm({
  companyId,
  issueId,
  offer,
  onRecorded,
  onCancel,
}: {
  companyId: string;
  issueId: string;
  offer: ReconstructionOffer;
  onRecorded: (intent: ReconstructionIntent) => void;
  onCancel: () => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // R-RC-3: one request id per opened form: a double-click or a retry adopts the first intent.
  const [requestId] = useState(() => crypto.randomUUID());
  const router = useRouter();
  // R-RC-2: the status version the viewer saw when the form opened, not whatever a refetch says;
  // it moves only when the operator asks to reload the task after a refusal said it changed.
  const [seen, setSeen] = useState(() => offer);
  // The attachments, though, are the live offer's: one uploaded on another page appears here at once.
  const shown = withCurrentAttachments(seen, offer);
  const [reloading, setReloading] = useState(false);
  const [draft, setDraft] = useState<ReconstructionDraft>(EMPTY_DRAFT);
  const [showProblems, setShowProblems] = useState(false);
  const reconstruct = useMutation(
    trpc.recovery.reconstructWorkspace.mutationOptions({
      onSuccess: async (answer) => {
        onRecorded(answer.intent);
        await queryClient.invalidateQueries({ queryKey: trpc.recovery.pathKey() });
      },
    }),
  );
  const check = checkReconstructionDraft(shown, draft, requestId);
  const editRow = (key: number, change: Parameters<typeof updateOutcomeRow>[2]) => setDraft({ ...draft, outcomes: updateOutcomeRow(draft.outcomes, key, change) });
  const refusal = reconstruct.error ? describeRefusal(domainCodeOf(reconstruct.error), userMessageOf(reconstruct.error)) : null;
  // The typed fields stay: the page's server parts and the offer are read again, the form is not
  // remounted, and the operator submits once they have seen the task as it is now. No offer any
  // more (the hold was resolved meanwhile) and the notice drops the form with it.
  const reloadTask = async () => {
    setReloading(true);
    try {
      router.refresh();
      const fresh = await queryClient.fetchQuery({ ...trpc.recovery.reconstructionOffer.queryOptions({ companyId, issueId }), staleTime: 0 });
      if (fresh) setSeen(fresh);
      reconstruct.reset();
    } finally {
      setReloading(false);
    }
  };

  return (
    <form
      className="space-y-4 rounded-md border border-slate-200 bg-white p-3"
      data-testid="reconstruction-form"
      // The draft's own check lists every missing part at once (the browser's would stop at the first).
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        if (check.kind !== "ready") {
          setShowProblems(true);
          return;
        }
        if (reconstruct.isPending) return;
        reconstruct.mutate({ companyId, issueId, ...check.body });
      }}
    >
      <div className="space-y-1">
        <p className="text-sm font-medium text-slate-800">Continue from saved sources</p>
        <p className="text-xs text-slate-600" data-testid="reconstruction-statement">
          This is reconstruction, not recovery of the missing edits: the sandbox and its unsaved files are gone. A fresh session of the agent starts from the
          attachments you select and your description of what was lost. The failed run, its result and its records stay as they are.
        </p>
      </div>

      <fieldset className="space-y-1">
        <legend className="text-xs font-medium uppercase tracking-wide text-slate-500">Surviving attachments</legend>
        {shown.attachments.length === 0 ? (
          <p className="text-sm text-slate-600" data-testid="reconstruction-no-attachments">
            This task has no saved attachments to continue from.
          </p>
        ) : (
          shown.attachments.map((attachment) => (
            <label key={attachment.id} className="flex items-start gap-2 text-sm text-slate-700">
              <input
                type="checkbox"
                className="mt-0.5"
                data-testid="reconstruction-attachment"
                value={attachment.id}
                checked={draft.attachmentIds.includes(attachment.id)}
                onChange={(event) => setDraft(toggleAttachment(draft, attachment.id, event.target.checked))}
              />
              <span className="font-mono text-xs">{attachmentLabel(attachment)}</span>
            </label>
          ))
        )}
      </fieldset>

      <label className="block space-y-1">
        <span className="text-xs font-medium uppercase tracking-wide text-slate-500">What work is missing</span>
        <textarea
          className="field w-full"
          rows={3}
          required
          data-testid="reconstruction-description"
          value={draft.description}
          onChange={(event) => setDraft({ ...draft, description: event.target.value })}
        />
      </label>

      <fieldset className="space-y-2">
        <legend className="text-xs font-medium uppercase tracking-wide text-slate-500">External actions the run took</legend>
        <p className="text-xs text-slate-600">Record what you observed of each: performed, not performed, or unknown. Nothing is assumed; the fresh session is told these so that it does not repeat an action that was performed or whose outcome is unknown.</p>
        {draft.outcomes.map((row, index) => (
          <div key={row.key} className="grid gap-2 rounded-md bg-slate-50 p-2 sm:grid-cols-[minmax(0,1fr)_10rem]" data-testid="reconstruction-outcome">
            <input
              className="field w-full"
              aria-label={`External action ${index + 1}`}
              placeholder="What the action was"
              data-testid="reconstruction-outcome-action"
              value={row.action}
              onChange={(event) => editRow(row.key, { action: event.target.value })}
            />
            <select
              className="field w-full"
              aria-label={`Outcome of external action ${index + 1}`}
              data-testid="reconstruction-outcome-select"
              value={row.outcome}
              onChange={(event) => editRow(row.key, { outcome: event.target.value as Outcome | "" })}
            >
              <option value="">Choose…</option>
              {OUTCOME_CHOICES.map((choice) => (
                <option key={choice.value} value={choice.value}>
                  {choice.label}
                </option>
              ))}
            </select>
            <input
              className="field w-full"
              aria-label={`Evidence for external action ${index + 1}`}
              placeholder="Evidence (optional)"
              data-testid="reconstruction-outcome-evidence"
              value={row.evidence}
              onChange={(event) => editRow(row.key, { evidence: event.target.value })}
            />
            <button
              type="button"
              className="btn btn-secondary text-xs"
              data-testid="reconstruction-outcome-remove"
              onClick={() => setDraft({ ...draft, outcomes: removeOutcomeRow(draft.outcomes, row.key) })}
            >
              Remove
            </button>
          </div>
        ))}
        <button type="button" className="btn btn-secondary text-xs" data-testid="reconstruction-outcome-add" onClick={() => setDraft({ ...draft, outcomes: addOutcomeRow(draft.outcomes) })}>
          Add an external action
        </button>
      </fieldset>

      {showProblems && check.kind === "incomplete" ? (
        <ul className="list-disc space-y-0.5 pl-5 text-sm text-amber-800" data-testid="reconstruction-problems">
          {check.problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      ) : null}

      {refusal ? (
        <div className="flex flex-wrap items-center gap-3 rounded-md bg-red-50 px-3 py-2">
          <p role="alert" className="text-sm text-red-800" data-testid="reconstruction-error">
            {refusal.message}
          </p>
          {refusal.reload ? (
            <button type="button" className="btn btn-secondary text-xs" data-testid="reconstruction-reload" disabled={reloading} onClick={() => void reloadTask()}>
              {reloading ? "Reloading…" : "Reload the task"}
            </button>
          ) : null}
        </div>
      ) : null}

      <div className="flex flex-wrap items-center gap-3">
        <button type="submit" className="btn btn-primary" data-testid="reconstruction-submit" disabled={reconstruct.isPending}>
          {reconstruct.isPending ? "Recording…" : "Continue from saved sources"}
        </button>
        <button type="button" className="btn btn-secondary" onClick={onCancel} disabled={reconstruct.isPending}>
          Cancel
        </button>
      </div>
    </form>
  );
}
