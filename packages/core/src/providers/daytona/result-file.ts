// The agent's result file in a Daytona sandbox (COPYBACK_RESULT_FILE, LAYOUT.resultFile): read
// once after the exit and removed, at most 1 MiB of UTF-8 in a regular file; anything else is
// refused with a note, never truncated or followed (as the local provider's result-file.ts).
import type { Sandbox } from "@daytonaio/sdk";
import { MAX_RESULT_FILE_BYTES, type ResultFileReading } from "../local/result-file";
import type { DaytonaClient } from "./client";
import { runScript } from "./commands";
import { LAYOUT, shellQuote } from "./layout";
import { digestScript, downloadChecked, parseDigest } from "./transfer";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Shell: 10 absent, 11 a link, 12 not a regular file, 13 too large; else its digest. */
function probeScript(): string {
  const f = shellQuote(LAYOUT.resultFile);
  return [
    `if [ -L ${f} ]; then exit 11; fi`,
    `if [ ! -e ${f} ]; then exit 10; fi`,
    `if [ ! -f ${f} ]; then exit 12; fi`,
    `if [ "$(wc -c < ${f})" -gt ${MAX_RESULT_FILE_BYTES} ]; then exit 13; fi`,
    digestScript(LAYOUT.resultFile),
  ].join("\n");
}

export async function takeResultFile(client: DaytonaClient, sandbox: Sandbox): Promise<ResultFileReading> {
  const probe = await runScript(client, sandbox, probeScript(), { what: "looking for the result file", timeoutSec: 60, allow: [10, 11, 12, 13] });
  const remove = () => runScript(client, sandbox, `rm -rf ${shellQuote(LAYOUT.resultFile)}`, { what: "removing the result file", timeoutSec: 60 });
  const refused: Record<number, string> = {
    11: "the result file is a symbolic link",
    12: "the result file is not a regular file",
    13: `the result file is larger than ${MAX_RESULT_FILE_BYTES} bytes`,
  };
  if (probe.exitCode === 10) return { kind: "absent" };
  if (probe.exitCode !== 0) {
    await remove();
    return { kind: "refused", note: refused[probe.exitCode] ?? "the result file cannot be read" };
  }
  const digest = parseDigest(probe.output);
  if (!digest) return { kind: "refused", note: "the result file cannot be read" };
  const stream = await downloadChecked(client, sandbox, LAYOUT.resultFile, digest, { what: "result file", timeoutSec: 120 });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  await remove();
  try {
    return { kind: "read", text: strictUtf8.decode(Buffer.concat(chunks)) };
  } catch {
    return { kind: "refused", note: "the result file is not UTF-8 text" };
  }
}
