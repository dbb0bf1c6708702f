// R-RC-5 (capability `placeInputs`): a reconstruction's read-only inputs in a Daytona sandbox, at
// LAYOUT.inputs, outside the exported workspace (never copied back to the host). All or nothing:
// every input is uploaded into a fresh directory beside it, each one checked in the sandbox
// against the bytes that were streamed (sha256), and only then swapped in by one rename; a stream
// that errors (the caller's verification failed) or a short one leaves the old inputs as they were.
// The agent runs as the sandbox's one user, so the files are not protected from it: readOnly false.
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DomainError } from "../../errors";
import { checkInputPaths } from "../input-paths";
import { isRenderedInput, type LeaseHandle, type PlacedInputs, type SandboxInput } from "../types";
import { refuseUnderRunningAgent } from "./busy";
import { runScript } from "./commands";
import { providerErrorOf } from "./errors";
import { LAYOUT, shellQuote } from "./layout";
import type { DaytonaSandboxes } from "./sandboxes";
import { digestScript, parseDigest } from "./transfer";
import { hashing, sandboxWorkdir } from "./uploads";

const NEXT = `${LAYOUT.inputs}.next`;

export async function placeInputs(sandboxes: DaytonaSandboxes, lease: LeaseHandle, inputs: readonly SandboxInput[]): Promise<PlacedInputs> {
  checkInputPaths(inputs.map((i) => i.relativePath));
  const { client, sandbox, address } = await sandboxes.open(lease);
  const variable = address.apiKeyEnv;
  await refuseUnderRunningAgent(client, sandbox, lease.leaseId, "its inputs are");
  const workdir = await sandboxWorkdir(client, sandbox);
  const directory = `${workdir}/${LAYOUT.inputs}`;
  const placed: PlacedInputs = { directory, paths: inputs.map((i) => `${directory}/${i.relativePath}`), readOnly: false };
  await runScript(client, sandbox, `rm -rf ${shellQuote(NEXT)} && mkdir -p ${shellQuote(NEXT)}`, { what: "preparing the inputs", timeoutSec: 60 });
  try {
    for (const input of inputs) {
      const target = `${NEXT}/${input.relativePath}`;
      let expected: { size: number; sha256: string };
      if (isRenderedInput(input)) {
        const bytes = Buffer.from(input.render(placed));
        expected = { size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
        await client.call(`uploading input ${input.relativePath}`, () => sandbox.fs.uploadFile(bytes, target), { sandboxId: sandbox.id });
      } else {
        const source: Readable = await input.open();
        const hash = hashing();
        // A stream is sent once (never retried from where it broke): its failure fails the placement.
        const upload = sandbox.fs.uploadFileStream(hash.stream, target).catch((error: unknown) => {
          throw providerErrorOf(error, { what: `uploading input ${input.relativePath}`, variable, sandboxId: sandbox.id });
        });
        const [piped] = await Promise.allSettled([pipeline(source, hash.stream), upload]);
        await upload;
        if (piped.status === "rejected") throw piped.reason;
        expected = hash.digest();
        if (expected.size !== input.sizeBytes) {
          throw new DomainError("conflict", "provider_input_incomplete", `The input ${input.relativePath} has ${expected.size} bytes, not ${input.sizeBytes}.`);
        }
      }
      const arrived = parseDigest((await runScript(client, sandbox, digestScript(target), { what: "checking an input", timeoutSec: 120 })).output);
      if (!arrived || arrived.size !== expected.size || arrived.sha256 !== expected.sha256) {
        throw new DomainError("unavailable", "transfer_dropped", `The input ${input.relativePath} did not arrive intact in the sandbox.`);
      }
    }
    const inputsDir = shellQuote(LAYOUT.inputs);
    const old = shellQuote(`${LAYOUT.inputs}.old`);
    await runScript(client, sandbox, `set -e\nrm -rf ${old}\nif [ -e ${inputsDir} ]; then mv ${inputsDir} ${old}; fi\nmv ${shellQuote(NEXT)} ${inputsDir}\nrm -rf ${old}`, {
      what: "placing the inputs",
      timeoutSec: 120,
    });
  } catch (error) {
    await runScript(client, sandbox, `rm -rf ${shellQuote(NEXT)}`, { what: "removing unplaced inputs", timeoutSec: 60 }).catch(() => undefined);
    throw error;
  }
  return placed;
}
