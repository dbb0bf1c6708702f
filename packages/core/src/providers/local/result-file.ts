// The process adapter's result file: what the agent wrote to COPYBACK_RESULT_FILE, read once
// after the process exits and then removed. At most 1 MiB of UTF-8 in a regular file; anything
// else is refused (null) with a note in the run's stderr, never truncated or followed.
import { constants } from "node:fs";
import { open, rm } from "node:fs/promises";
import { errnoOf } from "../../errors";

export const MAX_RESULT_FILE_BYTES = 1024 * 1024;

export type ResultFileReading = { kind: "absent" } | { kind: "read"; text: string } | { kind: "refused"; note: string };

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

export async function readResultFile(file: string): Promise<ResultFileReading> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const errno = errnoOf(error);
    if (errno === "ENOENT") return { kind: "absent" };
    if (errno === "ELOOP") return { kind: "refused", note: "the result file is a symbolic link" };
    return { kind: "refused", note: `the result file cannot be opened (${errno ?? "error"})` };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { kind: "refused", note: "the result file is not a regular file" };
    if (stats.size > MAX_RESULT_FILE_BYTES) return { kind: "refused", note: `the result file is larger than ${MAX_RESULT_FILE_BYTES} bytes` };
    // Read one byte more than allowed: a file that grew after fstat is refused as well.
    const buffer = Buffer.alloc(MAX_RESULT_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_RESULT_FILE_BYTES) return { kind: "refused", note: `the result file is larger than ${MAX_RESULT_FILE_BYTES} bytes` };
    }
    try {
      return { kind: "read", text: strictUtf8.decode(buffer.subarray(0, length)) };
    } catch {
      return { kind: "refused", note: "the result file is not UTF-8 text" };
    }
  } finally {
    await handle.close();
  }
}

/** Reads, then removes whatever is at the path (a link itself, never its target). */
export async function takeResultFile(file: string): Promise<ResultFileReading> {
  const reading = await readResultFile(file);
  await rm(file, { recursive: true, force: true });
  return reading;
}
