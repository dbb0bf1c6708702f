// What placeInputs and placeAgentPack share: the sandbox's working directory as its processes see
// it, and a stream pass-through that measures what was sent (the sandbox's copy is then checked
// against it, never against what the caller announced).
import { createHash } from "node:crypto";
import { Transform } from "node:stream";
import type { Sandbox } from "@daytonaio/sdk";
import { DomainError } from "../../errors";
import type { DaytonaClient } from "./client";
import { runScript } from "./commands";

/** Shell: the sandbox's working directory, absolute, as the agent's process sees it. */
const PWD_SCRIPT = 'printf "%s" "$PWD"';

export async function sandboxWorkdir(client: DaytonaClient, sandbox: Sandbox): Promise<string> {
  const workdir = (await runScript(client, sandbox, PWD_SCRIPT, { what: "reading the sandbox's working directory", timeoutSec: 60 })).output.trim();
  if (!workdir.startsWith("/")) throw new DomainError("unavailable", "provider_daytona_unavailable", "The sandbox did not say where its working directory is.");
  return workdir;
}

export function hashing(): { stream: Transform; digest: () => { size: number; sha256: string } } {
  const hash = createHash("sha256");
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, digest: () => ({ size, sha256: hash.digest("hex") }) };
}
