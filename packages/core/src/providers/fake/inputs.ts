// R-RC-5: the fake's placeInputs. No file system: the inputs are bytes kept beside the sandbox's
// workspace, by the absolute path the agent is told.
import { DomainError } from "../../errors";
import { checkInputPaths } from "../input-paths";
import { isRenderedInput, type LeaseHandle, type PlacedInputs, type SandboxInput } from "../types";
import type { FakeSandbox } from "./sandbox";

/** R-RC-5: where a fake sandbox's inputs "are" (no file system: the paths name placeInputs' entries). */
export const fakeInputsDirectory = (providerLeaseId: string) => `/copyback-fake/${providerLeaseId}/inputs`;

export async function placeFakeInputs(sandbox: FakeSandbox, lease: LeaseHandle, inputs: readonly SandboxInput[]): Promise<PlacedInputs> {
  checkInputPaths(inputs.map((i) => i.relativePath));
  const directory = fakeInputsDirectory(lease.providerLeaseId);
  // Read in full first, then committed at once: a stream that errors leaves no input placed.
  const placed: PlacedInputs = { directory, paths: inputs.map((i) => `${directory}/${i.relativePath}`), readOnly: true };
  const staged = new Map<string, Uint8Array>();
  for (const input of inputs) {
    if (isRenderedInput(input)) {
      staged.set(`${directory}/${input.relativePath}`, Buffer.from(input.render(placed)));
      continue;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of await input.open()) chunks.push(Buffer.from(chunk as Uint8Array));
    const bytes = Buffer.concat(chunks);
    if (bytes.length !== input.sizeBytes) {
      throw new DomainError("conflict", "provider_input_incomplete", `The input ${input.relativePath} has ${bytes.length} bytes, not ${input.sizeBytes}.`);
    }
    staged.set(`${directory}/${input.relativePath}`, bytes);
  }
  sandbox.inputs = staged;
  return placed;
}
