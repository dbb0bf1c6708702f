// Content hashing without following links and without trusting an earlier lstat: the file is
// opened with O_NOFOLLOW and the hash, size and mode all come from that one open descriptor.
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { open } from "node:fs/promises";

const WHOLE_READ_LIMIT = 1 << 20; // small files: one read; larger ones: a streamed loop
const CHUNK = 1 << 20;

export interface HashedFile {
  sha256: string;
  size: number;
  mode: number;
  isFile: boolean;
}

export async function hashFile(absolutePath: string): Promise<HashedFile> {
  const handle = await open(absolutePath, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const stat = await handle.stat();
    const mode = stat.mode & 0o777;
    if (!stat.isFile()) return { sha256: "", size: 0, mode, isFile: false };
    const hash = createHash("sha256");
    let size = 0;
    if (stat.size <= WHOLE_READ_LIMIT) {
      const data = await handle.readFile();
      hash.update(data);
      size = data.length;
    } else {
      const buffer = Buffer.allocUnsafe(CHUNK);
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, CHUNK, null);
        if (bytesRead === 0) break;
        hash.update(bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead));
        size += bytesRead;
      }
    }
    return { sha256: hash.digest("hex"), size, mode, isFile: true };
  } finally {
    await handle.close();
  }
}
