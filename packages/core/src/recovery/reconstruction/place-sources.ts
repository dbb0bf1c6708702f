// R-RC-5: a reconstruction's saved sources reach its fresh session without any network. Called by
// the executor after the sandbox is acquired and seeded and before the agent starts: each selected
// attachment's stored bytes are read from the attachment store (never through a link, only the
// task's own rows), verified against the sha256 and size the intent recorded as they stream into
// the provider's placeInputs (verify-source.ts), and placed outside the exported workspace, all or
// nothing. A mismatch or an unreadable file is a refusal (the executor refuses the run and
// withdraws the decision exactly as the handoff recheck does); a provider without `placeInputs`
// keeps the contentUrl delivery and the context says so. Provider failures are thrown.
import type { PrismaClient } from "@copyback/db/client";
import type { Readable } from "node:stream";
import { openStoredAttachment } from "../../attachments/stored-file";
import { hasCapability } from "../../providers/registry";
import type { EnvironmentProvider, LeaseHandle, SandboxInput } from "../../providers/types";
import type { ReconstructionContext } from "./authority";
import { planSources, withSourcesByUrlOnly, withSourcesPlaced, type DeliveredReconstructionContext } from "./sandbox-sources";
import { SourceVerdict, verifyingStream, type SourceRefusal } from "./verify-source";

export type SourcesPlacement =
  | { kind: "placed"; context: DeliveredReconstructionContext }
  | { kind: "url_only"; context: DeliveredReconstructionContext }
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
  if (!hasCapability(plugin, "placeInputs")) return { kind: "url_only", context: withSourcesByUrlOnly(input.context, plugin.pluginId) };
  const planned = planSources(input.context);
  const ids = planned.map((p) => p.attachmentId);
  const rows = ids.length
    ? await deps.db.issueAttachment.findMany({ where: { id: { in: ids }, companyId: input.companyId, issueId: input.issueId }, select: { id: true, storagePath: true } })
    : [];
  const storagePaths = new Map(rows.map((r) => [r.id, r.storagePath]));
  const verdict = new SourceVerdict();
  const unavailable = (attachmentId: string) =>
    verdict.refuse({ code: "attachment_unavailable", attachmentId, message: `The stored bytes of attachment ${attachmentId} cannot be read.` });

  const inputs: SandboxInput[] = planned.map((source) => ({
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
  return { kind: "placed", context: withSourcesPlaced(input.context, placed) };
}
