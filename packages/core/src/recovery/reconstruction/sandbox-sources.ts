// R-RC-5 ("the agent must verify the selected attachments before rebuilding files"), pure: where a
// reconstruction's saved sources go in the sandbox and what COPYBACK_RECONSTRUCTION then says.
// The default `local` environment has no network, so the controller itself places each selected
// attachment's bytes in the sandbox, outside the exported workspace, at
// `<inputs directory>/<attachmentId>/<file name>` (place-sources.ts does the I/O); the agent is
// told each `path` and still verifies the sha256 and size it is given. A provider that cannot
// place files keeps the contentUrl delivery, and the context says so (`sources.delivery`).
import { inputRelativePath } from "../../providers/input-paths";
import type { PlacedInputs } from "../../providers/types";
import { reconstructionInstructions, type ReconstructionContext } from "./authority";

export interface PlannedSource {
  attachmentId: string;
  /** Below the sandbox's inputs directory (providers/input-paths.ts). */
  relativePath: string;
  sha256: string;
  sizeBytes: number;
}

/** One input per selected attachment, in the context's order, named after its stored file name. */
export function planSources(context: ReconstructionContext): PlannedSource[] {
  return context.attachments.map((a) => ({ attachmentId: a.attachmentId, relativePath: inputRelativePath(a.attachmentId, a.name), sha256: a.sha256, sizeBytes: a.sizeBytes }));
}

/** The context the agent gets once every source is placed: each attachment's `path`, contentUrl kept. */
export function withSourcesPlaced(context: ReconstructionContext, placed: PlacedInputs) {
  if (placed.paths.length !== context.attachments.length) throw new Error("placeInputs answered another number of paths than inputs");
  return {
    ...context,
    attachments: context.attachments.map((a, i) => ({ ...a, path: placed.paths[i] as string })),
    sources: { delivery: "sandbox" as const, directory: placed.directory, readOnly: placed.readOnly },
    instructions: reconstructionInstructions("sandbox"),
  };
}

/** The context when the sandbox's provider cannot place files: contentUrl only, said plainly. */
export function withSourcesByUrlOnly(context: ReconstructionContext, pluginId: string) {
  return {
    ...context,
    sources: {
      delivery: "contentUrl" as const,
      reason: `The sandbox's provider (${pluginId}) cannot place files in it; fetch each attachment from its contentUrl (this needs the console to be reachable from the sandbox).`,
    },
    instructions: reconstructionInstructions("contentUrl"),
  };
}

export type DeliveredReconstructionContext = ReturnType<typeof withSourcesPlaced> | ReturnType<typeof withSourcesByUrlOnly>;
