import { describe, expect, it } from "vitest";
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
  type OfferIdentity,
  type ReconstructionDraft,
} from "./reconstruction-draft";

const A = "a0000000-0000-4000-8000-000000000001";
const B = "b0000000-0000-4000-8000-000000000002";
const FOREIGN = "f0000000-0000-4000-8000-00000000000f";

const offer: OfferIdentity = {
  actionId: "0badf00d-1234-4567-89ab-cdef01234567",
  sourceRunId: "2f6e9a10-1111-4222-8333-944455556666",
  leaseId: "1ea5e000-1234-4567-89ab-cdef01234567",
  statusVersion: 7,
  attachments: [
    { id: A, name: "notes.md", sizeBytes: 4200, sha256: "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b" },
    { id: B, name: "plan.pdf", sizeBytes: 13_000_000, sha256: "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100" },
  ],
};

const ready = (draft: ReconstructionDraft) => {
  const check = checkReconstructionDraft(offer, draft, "req-1");
  if (check.kind !== "ready") throw new Error(`not ready: ${check.problems.join(" | ")}`);
  return check.body;
};

describe("reconstruction draft", () => {
  it("R-UI-3 labels an attachment with its name, size and a short hash", () => {
    expect(attachmentLabel(offer.attachments[0]!)).toBe("notes.md · 4.2 KB · sha256 1a2b3c4d5e6f");
    expect(attachmentLabel(offer.attachments[1]!)).toBe("plan.pdf · 13 MB · sha256 ffeeddccbbaa");
  });

  it("R-RC-2 an empty draft names every missing part: an attachment and the description", () => {
    const check = checkReconstructionDraft(offer, EMPTY_DRAFT, "req-1");
    expect(check).toEqual({ kind: "incomplete", problems: ["Select at least one surviving attachment to continue from.", "Describe the work that was lost."] });
  });

  it("R-RC-2 a whitespace description is missing", () => {
    const check = checkReconstructionDraft(offer, { ...EMPTY_DRAFT, attachmentIds: [A], description: "  \n " }, "req-1");
    expect(check).toEqual({ kind: "incomplete", problems: ["Describe the work that was lost."] });
  });

  it("R-RC-2 an outcome row needs the action and an explicitly chosen outcome (nothing is certified by default)", () => {
    const rows = addOutcomeRow([]);
    expect(rows).toEqual([{ key: 1, action: "", outcome: "", evidence: "" }]);
    const check = checkReconstructionDraft(offer, { attachmentIds: [A], description: "Rebuild the parser.", outcomes: rows }, "req-1");
    expect(check).toEqual({
      kind: "incomplete",
      problems: ["External action 1: say what the action was.", "External action 1: choose whether it was performed, not performed or is unknown."],
    });
    const named = updateOutcomeRow(rows, 1, { action: "Opened PR #12" });
    const stillMissing = checkReconstructionDraft(offer, { attachmentIds: [A], description: "x", outcomes: named }, "req-1");
    expect(stillMissing.kind === "incomplete" && stillMissing.problems).toEqual(["External action 1: choose whether it was performed, not performed or is unknown."]);
  });

  it("R-RC-2 R-RC-3 a ready draft becomes the body with the offer's exact identities, the seen status version and the form's request id", () => {
    let rows = addOutcomeRow(addOutcomeRow([]));
    rows = updateOutcomeRow(rows, 1, { action: "  Posted the release note ", outcome: "performed", evidence: " Slack #releases 10:02 " });
    rows = updateOutcomeRow(rows, 2, { action: "Deployed staging", outcome: "unknown", evidence: "   " });
    const body = ready({ attachmentIds: [B, A], description: "  Rebuild the parser from notes.md.  ", outcomes: rows });
    expect(body).toEqual({
      actionId: offer.actionId,
      sourceRunId: offer.sourceRunId,
      leaseId: offer.leaseId,
      // The offer's order, whatever the order of the clicks: the same choice is the same request.
      attachmentIds: [A, B],
      description: "Rebuild the parser from notes.md.",
      externalActionOutcomes: [
        { action: "Posted the release note", outcome: "performed", evidence: "Slack #releases 10:02" },
        { action: "Deployed staging", outcome: "unknown" },
      ],
      sourceStatusVersion: 7,
      requestId: "req-1",
    });
  });

  it("R-RC-2 an attachment the offer does not list is never sent", () => {
    const body = ready({ attachmentIds: [FOREIGN, A], description: "x", outcomes: [] });
    expect(body.attachmentIds).toEqual([A]);
    const onlyForeign = checkReconstructionDraft(offer, { attachmentIds: [FOREIGN], description: "x", outcomes: [] }, "req-1");
    expect(onlyForeign.kind).toBe("incomplete");
  });

  it("R-RC-3 the same draft and request id give the same body (a double-click or retry sends the same request)", () => {
    const draft = { attachmentIds: [A], description: "x", outcomes: updateOutcomeRow(addOutcomeRow([]), 1, { action: "a", outcome: "not_performed" as const }) };
    expect(ready(draft)).toEqual(ready(draft));
  });

  it("R-RC-2 R-UI-3 an open form offers the attachments the live offer lists now, and still sends the identities and status version it opened with", () => {
    const C = "c0000000-0000-4000-8000-000000000003";
    const uploaded = { id: C, name: "api.md", sizeBytes: 10, sha256: "c".repeat(64) };
    // Refetched after an upload on another page: the task changed meanwhile too.
    const live: OfferIdentity = { ...offer, statusVersion: 8, attachments: [...offer.attachments, uploaded] };
    const shown = withCurrentAttachments(offer, live);
    expect(shown.attachments.map((a) => a.id)).toEqual([A, B, C]);
    const body = checkReconstructionDraft(shown, { attachmentIds: [C], description: "x", outcomes: [] }, "req-1");
    expect(body.kind === "ready" && body.body).toMatchObject({ attachmentIds: [C], actionId: offer.actionId, sourceStatusVersion: 7 });
    // One the current offer no longer lists cannot be sent; no offer at all keeps what was seen.
    const without = withCurrentAttachments(offer, { attachments: [offer.attachments[0]!] });
    expect(checkReconstructionDraft(without, { attachmentIds: [B], description: "x", outcomes: [] }, "req-1").kind).toBe("incomplete");
    expect(withCurrentAttachments(offer, null)).toBe(offer);
  });

  it("toggles attachments without duplicates", () => {
    let draft = toggleAttachment(EMPTY_DRAFT, A, true);
    draft = toggleAttachment(draft, A, true);
    draft = toggleAttachment(draft, B, true);
    expect(draft.attachmentIds).toEqual([A, B]);
    expect(toggleAttachment(draft, A, false).attachmentIds).toEqual([B]);
  });

  it("adds and removes outcome rows; a removed row's key is never reused while a higher one exists", () => {
    let rows = addOutcomeRow(addOutcomeRow(addOutcomeRow([])));
    rows = updateOutcomeRow(rows, 2, { action: "second" });
    rows = removeOutcomeRow(rows, 1);
    expect(rows.map((r) => [r.key, r.action])).toEqual([
      [2, "second"],
      [3, ""],
    ]);
    expect(addOutcomeRow(rows).map((r) => r.key)).toEqual([2, 3, 4]);
  });

  it("offers the three outcomes of the spec", () => {
    expect(OUTCOME_CHOICES.map((c) => c.value)).toEqual(["performed", "not_performed", "unknown"]);
  });

  it("R-RC-2 a changed status version reads 'the task changed since you opened it; reload' and offers the reload; unknown codes keep the server's sentence", () => {
    const stale = describeRefusal("status_version_changed", "Conflict");
    expect(stale.message).toMatch(/^The task changed since you opened it; reload/);
    expect(stale.reload).toBe(true);
    // A fresh read cannot bring back a sandbox or an attachment's bytes: no reload offered.
    expect(describeRefusal("source_not_destroyed", "x").reload).toBe(false);
    expect(describeRefusal("attachment_changed", "x").reload).toBe(false);
    expect(describeRefusal("something_new", "The server's own sentence.")).toEqual({ message: "The server's own sentence.", reload: false });
    expect(describeRefusal(null, "Fallback.")).toEqual({ message: "Fallback.", reload: false });
  });
});
