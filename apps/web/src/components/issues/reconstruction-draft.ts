// The pure half of "Continue from saved sources" (R-UI-3, R-RC-1..R-RC-3): what the form offers,
// what a finished draft is, the request body it becomes and how a refusal reads. No React, no
// I/O, so every rule of the form is a table-driven unit test (reconstruction-draft.test.ts).
//
// The offer comes from the server (recovery.reconstructionOffer): it exists only after the exact
// sandbox's destruction was confirmed (R-RC-1), so nothing here decides eligibility; the form only
// refuses to send a draft that the server would refuse for its shape, and never guesses an
// outcome for the operator: each external action's outcome must be chosen (no default certifies
// anything, the same reasoning as the unchecked confirmation of R-UI-4).
import { formatBytes } from "~/components/format/bytes";

export const OUTCOMES = ["performed", "not_performed", "unknown"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** The outcome select's choices, in the order the form lists them. */
export const OUTCOME_CHOICES: readonly { value: Outcome; label: string }[] = [
  { value: "performed", label: "Performed" },
  { value: "not_performed", label: "Not performed" },
  { value: "unknown", label: "Unknown" },
];

export interface OfferAttachment {
  id: string;
  name: string;
  sizeBytes: number;
  sha256: string;
}

/** What the form needs of the server's offer (the exact identities it sends back, R-RC-2). */
export interface OfferIdentity {
  actionId: string;
  sourceRunId: string;
  leaseId: string;
  /** The task's status version when the viewer opened the form (R-RC-2: stale versions are refused). */
  statusVersion: number;
  attachments: readonly OfferAttachment[];
}

export interface OutcomeRow {
  /** A key for React's list; never sent. */
  key: number;
  action: string;
  /** "" until the operator chooses: a row without a chosen outcome is not ready. */
  outcome: Outcome | "";
  evidence: string;
}

export interface ReconstructionDraft {
  attachmentIds: readonly string[];
  description: string;
  outcomes: readonly OutcomeRow[];
}

export const EMPTY_DRAFT: ReconstructionDraft = { attachmentIds: [], description: "", outcomes: [] };

/** "notes.md · 4.2 KB · sha256 1a2b3c4d5e6f": enough to tell two attachments apart at a glance. */
export function attachmentLabel(attachment: OfferAttachment): string {
  return `${attachment.name} · ${formatBytes(attachment.sizeBytes)} · sha256 ${shortHash(attachment.sha256)}`;
}

export const shortHash = (sha256: string): string => sha256.slice(0, 12);

/**
 * The offer the open form works from: the identities and status version the viewer saw when it
 * opened (R-RC-2: what the request sends back, moved only by "Reload the task"), with the task's
 * attachments as the server lists them now. A file attached meanwhile (the live feed refetches the
 * offer on every `issue_attachments` change) is a saved source to choose from at once, in the open
 * form, and choosing it changes no identity the server checks; one the current offer no longer
 * lists cannot be sent (checkReconstructionDraft sends only listed ones).
 */
export function withCurrentAttachments<T extends OfferIdentity>(seen: T, current: Pick<OfferIdentity, "attachments"> | null): T {
  return current ? { ...seen, attachments: current.attachments } : seen;
}

export function toggleAttachment(draft: ReconstructionDraft, id: string, selected: boolean): ReconstructionDraft {
  const rest = draft.attachmentIds.filter((a) => a !== id);
  return { ...draft, attachmentIds: selected ? [...rest, id] : rest };
}

/** A new empty row, keyed after the highest key so far (removed rows never lend their key). */
export function addOutcomeRow(rows: readonly OutcomeRow[]): OutcomeRow[] {
  const key = rows.reduce((max, row) => Math.max(max, row.key), 0) + 1;
  return [...rows, { key, action: "", outcome: "", evidence: "" }];
}

export function removeOutcomeRow(rows: readonly OutcomeRow[], key: number): OutcomeRow[] {
  return rows.filter((row) => row.key !== key);
}

export function updateOutcomeRow(rows: readonly OutcomeRow[], key: number, change: Partial<Omit<OutcomeRow, "key">>): OutcomeRow[] {
  return rows.map((row) => (row.key === key ? { ...row, ...change } : row));
}

export interface ReconstructionBody {
  actionId: string;
  sourceRunId: string;
  leaseId: string;
  attachmentIds: string[];
  description: string;
  externalActionOutcomes: { action: string; outcome: Outcome; evidence?: string }[];
  sourceStatusVersion: number;
  requestId: string;
}

export type DraftCheck = { kind: "ready"; body: ReconstructionBody } | { kind: "incomplete"; problems: string[] };

/**
 * The draft as the request body, or what is still missing (in the form's order). The ids and the
 * status version are the offer's as the viewer saw it, and the request id the opened form's own,
 * so a double-click or a retry adopts the first intent (R-RC-3). Only attachments the offer lists
 * are sent; an outcome row must name the action and its chosen outcome, and blank evidence is left
 * out rather than sent empty.
 */
export function checkReconstructionDraft(offer: OfferIdentity, draft: ReconstructionDraft, requestId: string): DraftCheck {
  const problems: string[] = [];
  const offered = new Set(offer.attachments.map((a) => a.id));
  // The offer's order, not the order of the clicks: the same choice is the same request.
  const attachmentIds = offer.attachments.map((a) => a.id).filter((id) => draft.attachmentIds.includes(id) && offered.has(id));
  if (attachmentIds.length === 0) problems.push("Select at least one surviving attachment to continue from.");
  const description = draft.description.trim();
  if (description === "") problems.push("Describe the work that was lost.");
  draft.outcomes.forEach((row, index) => {
    if (row.action.trim() === "") problems.push(`External action ${index + 1}: say what the action was.`);
    if (row.outcome === "") problems.push(`External action ${index + 1}: choose whether it was performed, not performed or is unknown.`);
  });
  if (problems.length > 0) return { kind: "incomplete", problems };
  return {
    kind: "ready",
    body: {
      actionId: offer.actionId,
      sourceRunId: offer.sourceRunId,
      leaseId: offer.leaseId,
      attachmentIds,
      description,
      externalActionOutcomes: draft.outcomes.map((row) => {
        const evidence = row.evidence.trim();
        return { action: row.action.trim(), outcome: row.outcome as Outcome, ...(evidence === "" ? {} : { evidence }) };
      }),
      sourceStatusVersion: offer.statusVersion,
      requestId,
    },
  };
}

/**
 * A refusal as the operator reads it, by the server's stable code, and whether a fresh read of the
 * task answers it (the form then offers "Reload the task", keeping every typed field). Unknown
 * codes keep the server's own sentence (the domain error's, written for board users).
 */
export interface Refusal {
  message: string;
  reload: boolean;
}

const CHANGED = "The task changed since you opened it; reload to see its current state, then submit again.";
const REFUSALS: Partial<Record<string, Refusal>> = {
  // Codes of core's RECONSTRUCTION_REFUSALS (recovery/reconstruction/contract.ts).
  status_version_changed: { message: CHANGED, reload: true },
  task_reassigned: { message: CHANGED, reload: true },
  newer_execution: { message: "A newer run of this task exists, so the lost work cannot be rebuilt over it. Reload to see it.", reload: true },
  competing_recovery: { message: "Another recovery of this task is open. Reload to see it.", reload: true },
  foreign_attachment: { message: "One of the selected attachments does not belong to this task. Reload and select again.", reload: true },
  source_not_destroyed: {
    message: "The sandbox's destruction is not confirmed, so this task cannot continue from saved sources. Use export or file recovery instead.",
    reload: false,
  },
  active_copyback_owner: { message: "A copyback of this run is still in progress. Try again once it has settled.", reload: false },
  attachment_unavailable: {
    message: "The stored bytes of a selected attachment cannot be read, so the agent could not verify them. Deselect it or restore the file.",
    reload: false,
  },
  attachment_changed: { message: "The stored bytes of a selected attachment no longer match their recorded hash. Deselect it or restore the file.", reload: false },
};

export function describeRefusal(code: string | null, serverMessage: string): Refusal {
  return (code ? REFUSALS[code] : undefined) ?? { message: serverMessage, reload: false };
}
