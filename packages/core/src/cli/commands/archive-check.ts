// `copyback archive check FILE`: validates an archive exactly as a merge would (R-UA-2) and
// explains every violation. Exit 0 safe, 1 rejected. Nothing is extracted, ever.
import { validateArchive } from "../../copyback/archive/index";
import { EXIT } from "../exit-codes";
import { requireFile } from "../input-files";
import type { CommandResult } from "../io";
import { formatBytes, table } from "../format";

export async function archiveCheck(file: string): Promise<CommandResult> {
  await requireFile(file, "The archive");
  const result = await validateArchive(file);
  if (result.kind === "safe") {
    return {
      exitCode: EXIT.ok,
      json: {
        archive: file,
        result: "safe",
        entries: result.entries,
        totalBytes: result.totalBytes,
      },
      text: [`safe: ${result.entries} entries, ${formatBytes(result.totalBytes)} of file data`],
    };
  }
  return {
    exitCode: EXIT.failed,
    json: { archive: file, result: "rejected", violations: result.violations },
    text: [
      `rejected: ${result.violations.length} violation(s); this archive would never be extracted`,
      ...table(
        ["code", "archive path", "detail"],
        result.violations.map((v) => [
          v.code,
          v.path === "" ? "(whole archive)" : v.path,
          v.detail,
        ]),
      ),
    ],
  };
}
