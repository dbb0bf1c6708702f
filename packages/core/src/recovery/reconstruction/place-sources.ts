// R-RC-5: a reconstruction's saved sources reach its fresh session without any network. Called by
// the executor after the sandbox is acquired and seeded and before the agent starts: each selected
// attachment's stored bytes are read from the attachment store (never through a link, only the
// task's own rows), verified against the sha256 and size the intent recorded as they stream into
// the provider's placeInputs (verify-source.ts), and placed outside the exported workspace, all or
// nothing, with the whole context beside them as `reconstruction.json` (context-delivery.ts). A mismatch or an unreadable file is a refusal (the executor refuses the run and
// withdraws the decision exactly as the handoff recheck does); a provider without `placeInputs`
// keeps the contentUrl delivery and the context says so. Provider failures are thrown.
import type { PrismaClient } from "@copyback/db/client";
import type { Readable } from "node:stream";
import { openStoredAttachment } from "../../attachments/stored-file";
import { hasCapability } from "../../providers/registry";
import type { EnvironmentProvider, LeaseHandle, PlacedInputs, SandboxInput } from "../../providers/types";
import type { ReconstructionContext } from "./authority";
import { contextDocument, RECONSTRUCTION_CONTEXT_FILE, type ContextDocument } from "./context-delivery";
import { planSources, withSourcesByUrlOnly, withSourcesPlaced, type DeliveredReconstructionContext } from "./sandbox-sources";
import { SourceVerdict, verifyingStream, type SourceRefusal } from "./verify-source";

export type SourcesPlacement =
  /** `file`: the whole context, placed as a read-only input beside the sources (context-delivery.ts). */
  | { kind: "placed"; context: DeliveredReconstructionContext; document: ContextDocument; file: string }
  | { kind: "url_only"; context: DeliveredReconstructionContext; document: ContextDocument }
  | ({ kind: "refused" } & SourceRefusal);

export interface PlaceSourcesInput {
  companyId: string;
  issueId: string;
  context: ReconstructionContext;
  plugin: EnvironmentProvider;
  lease: LeaseHandle;
}

export async function placeReconstructionSources(deps: { db: PrismaClient; instanceRoot: string }, input: PlaceSourcesInput): Promise<SourcesPlacement> {
  const { plugin } = input;
  if (!hasCapability(plugin, "placeInputs")) {
    const context = withSourcesByUrlOnly(input.context, plugin.pluginId);
    return { kind: "url_only", context, document: contextDocument(context) };
  }
  const planned = planSources(input.context);
  // An attachment's folder is its id (a UUID, intent-document.ts): never the context file's name.
  if (planned.some((p) => p.attachmentId === RECONSTRUCTION_CONTEXT_FILE)) throw new Error(`an attachment id collides with ${RECONSTRUCTION_CONTEXT_FILE}`);
  const ids = planned.map((p) => p.attachmentId);
  const rows = ids.length
    ? await deps.db.issueAttachment.findMany({ where: { id: { in: ids }, companyId: input.companyId, issueId: input.issueId }, select: { id: true, storagePath: true } })
    : [];
  const storagePaths = new Map(rows.map((r) => [r.id, r.storagePath]));
  const verdict = new SourceVerdict();
  const unavailable = (attachmentId: string) =>
    verdict.refuse({ code: "attachment_unavailable", attachmentId, message: `The stored bytes of attachment ${attachmentId} cannot be read.` });

  const sources: SandboxInput[] = planned.map((source) => ({
    relativePath: source.relativePath,
    sizeBytes: source.sizeBytes,
    // Opened only when the provider writes it: one attachment's file open at a time.
    async open(): Promise<Readable> {
      const storagePath = storagePaths.get(source.attachmentId);
      const opened = storagePath === undefined ? null : await openStoredAttachment(deps.instanceRoot, storagePath);
      if (!opened) throw unavailable(source.attachmentId);
      const bytes = opened.handle.createReadStream();
      const verified = verifyingStream(source, verdict);
      bytes.once("error", () => verified.destroy(unavailable(source.attachmentId)));
      return bytes.pipe(verified);
    },
  }));

  // The whole context, last: rendered by the provider with the paths it will answer, so the file
  // is exactly the document the agent is told (its attachments' paths included).
  let rendered: { placed: PlacedInputs; context: DeliveredReconstructionContext; document: ContextDocument } | null = null;
  const contextInput: SandboxInput = {
    relativePath: RECONSTRUCTION_CONTEXT_FILE,
    render(placed) {
      const context = withSourcesPlaced(input.context, sourcesOf(placed, planned.length));
      rendered = { placed, context, document: contextDocument(context) };
      return Buffer.from(rendered.document.text, "utf8");
    },
  };
  const inputs = [...sources, contextInput];

  let placed;
  try {
    placed = await plugin.placeInputs(input.lease, inputs);
  } catch (error) {
    // The controller's own verdict decides, however the provider reported the failed stream.
    if (verdict.refusal) return { kind: "refused", ...verdict.refusal };
    throw error;
  }
  // A provider that ignored a failed stream delivered nothing the agent may use: refused all the same.
  if (verdict.refusal) return { kind: "refused", ...verdict.refusal };
  const file = placed.paths[planned.length];
  const delivered = rendered as { placed: PlacedInputs; context: DeliveredReconstructionContext; document: ContextDocument } | null;
  if (file === undefined || !delivered) throw new Error("placeInputs did not place the reconstruction context");
  // The file names the placement it was rendered with: the provider's answer must be that one.
  if (!samePlacement(delivered.placed, placed)) throw new Error("placeInputs answered another placement than it rendered the context with");
  return { kind: "placed", context: delivered.context, document: delivered.document, file };
}

function samePlacement(a: PlacedInputs, b: PlacedInputs): boolean {
  return a.directory === b.directory && a.readOnly === b.readOnly && a.paths.length === b.paths.length && a.paths.every((p, i) => p === b.paths[i]);
}

/** The attachments' part of a placement (the context file comes after them). */
function sourcesOf(placed: PlacedInputs, count: number): PlacedInputs {
  return { ...placed, paths: placed.paths.slice(0, count) };
}
