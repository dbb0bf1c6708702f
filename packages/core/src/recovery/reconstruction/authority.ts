// R-RC-5: what a reconstruction's run is told and shows: the context document the fresh session
// gets, its event payload and its instructions. The authority key the run carries is a record of
// its own (records/reconstruction-authority.ts).
import type { ReconstructionIntent } from "@copyback/db/client";
import { attachmentContentPath } from "../../attachments/content-path";
import { contextDocument } from "./context-delivery";
import { readAttachmentHashes, readOutcomesDocument } from "./intent-document";

export const RECONSTRUCTION_CONTEXT_SCHEMA = "copyback.reconstruction-context.v1";

/**
 * What the fresh session is told (the agent's COPYBACK_RECONSTRUCTION, R-RC-5): reconstruction,
 * not recovery of the lost edits; the description of the missing work; the selected attachments
 * with the sha256 and size it must verify before rebuilding any file; the observed outcomes of
 * external actions, so that none is performed twice. Nothing of the old turn is replayed.
 */
export function reconstructionContext(intent: ReconstructionIntent, attachments: ReadonlyMap<string, { name: string; contentType: string }>) {
  const observed = readOutcomesDocument(intent.externalActionOutcomes)?.observed ?? [];
  return {
    schema: RECONSTRUCTION_CONTEXT_SCHEMA,
    intentId: intent.id,
    sourceRunId: intent.sourceRunId,
    destroyedLeaseId: intent.leaseId,
    description: intent.description,
    attachments: (readAttachmentHashes(intent.attachmentHashes) ?? []).map((h) => ({
      ...h,
      name: attachments.get(h.attachmentId)?.name ?? null,
      contentType: attachments.get(h.attachmentId)?.contentType ?? null,
      // R-RC-5: where the agent fetches the bytes it must verify (relative to COPYBACK_API_URL, with
      // its run's own COPYBACK_API_KEY; the route also sends X-Content-SHA256).
      contentUrl: attachmentContentPath(intent.issueId, h.attachmentId),
    })),
    externalActionOutcomes: observed,
    instructions: reconstructionInstructions("contentUrl"),
  };
}

export type ReconstructionContext = ReturnType<typeof reconstructionContext>;

/** How much of the description and of each external action the delivery's run event quotes. */
const QUOTED_CHARS = 500;
const quote = (text: string) => (text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text);

/**
 * The delivery's run event: which decision, which sources, what was observed, without the bulk.
 * The whole context may reach megabytes (a 20,000-character description, 200 external actions with
 * 20,000 characters of evidence each); run events are read by every open run page and announced
 * live, and the intent keeps the full decision. So the event quotes the description and each
 * action, names every attachment by id, name, size and hash, leaves the evidence out, and carries
 * the sha256 of the full context as delivered (the agent's copy adds where each file was placed).
 */
export function reconstructionEventPayload(context: ReconstructionContext) {
  return {
    schema: context.schema,
    intentId: context.intentId,
    sourceRunId: context.sourceRunId,
    destroyedLeaseId: context.destroyedLeaseId,
    description: quote(context.description),
    descriptionChars: context.description.length,
    attachments: context.attachments.map((a) => ({ attachmentId: a.attachmentId, name: a.name, sha256: a.sha256, sizeBytes: a.sizeBytes })),
    externalActionOutcomes: context.externalActionOutcomes.map((o) => ({ action: quote(o.action), outcome: o.outcome })),
    contextSha256: contextDocument(context).sha256,
  };
}

/**
 * What the fresh session is asked to do, by where it finds the saved sources: `sandbox`, each
 * attachment's `path` (placed by the controller, sandbox-sources.ts: no network needed), or
 * `contentUrl` only (a provider that cannot place files; the console must be reachable).
 */
export function reconstructionInstructions(delivery: "sandbox" | "contentUrl"): string {
  const fetch =
    delivery === "sandbox"
      ? "Read each attachment from its path (a read-only copy the controller placed in this sandbox, outside the workspace: no network is needed and it is never copied back) and verify its sha256 and size before using it to rebuild files; stop if one differs. " +
        "Its contentUrl serves the same bytes where the console is reachable. "
      : "Fetch each attachment from its contentUrl (GET, relative to COPYBACK_API_URL, Authorization: Bearer $COPYBACK_API_KEY) and verify its sha256 and size before using it to rebuild files; stop if one differs. ";
  return (
    "The earlier run's sandbox was destroyed with its unexported files; this is a fresh session that rebuilds the missing work from the saved sources. " +
    fetch +
    "Do not repeat an external action whose outcome is recorded as performed or unknown; nothing of the earlier turn is replayed."
  );
}
