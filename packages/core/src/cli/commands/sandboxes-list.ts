// `copyback sandboxes list [--company ID] [--limit N]`: every retained sandbox allocation,
// oldest first: why it is retained, its run and task, provider, pinned plugin and
// immutable allocation id, age and size where the provider tells. Reads only.
import { listRetainedSandboxes, type RetainedSandboxSize } from "../../sandboxes/list-retained";
import { withCliDatabase } from "../database";
import { EXIT } from "../exit-codes";
import { formatAge, formatBytes, table } from "../format";
import type { CommandContext, CommandResult } from "../io";

export const DEFAULT_SANDBOX_LIMIT = 200;

export async function sandboxesList(ctx: CommandContext, opts: { companyId?: string; limit: number }): Promise<CommandResult> {
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const { total, sandboxes } = await listRetainedSandboxes(prisma, opts);
    const json = { database: source, total, shown: sandboxes.length, sandboxes };
    const scope = opts.companyId === undefined ? "" : ` of company ${opts.companyId}`;
    if (sandboxes.length === 0) return { exitCode: EXIT.ok, json, text: [`no retained sandboxes${scope}`] };
    const text = [
      `${total} retained sandbox${total === 1 ? "" : "es"}${scope}, oldest first:`,
      ...table(
        ["lease", "company", "issue", "run", "provider / plugin", "allocation", "state", "age", "size", "why retained"],
        sandboxes.map((s) => [
          s.leaseId,
          s.companyName,
          s.issueIdentifier ?? "-",
          s.runId ? `${s.runId} (${s.runStatus ?? "?"})` : "-",
          `${s.provider} / ${s.pluginId}`,
          s.providerLeaseId ?? "(never named)",
          // An unfinished Discard's sandbox may already be gone: never "stopped" (files kept) then.
          `${s.leaseStatus}${s.discarding ? ", discarding" : s.stopped ? ", stopped" : ""}`,
          formatAge(s.ageSeconds * 1000),
          sizeText(s.size),
          s.reasons.map((r) => r.text).join("; ") || "-",
        ]),
      ),
    ];
    if (total > sandboxes.length) text.push(`... and ${total - sandboxes.length} more (--limit N, or --company ID)`);
    return { exitCode: EXIT.ok, json, text };
  });
}

/** The size column: "unknown" where the provider did not tell, "at least ..." for a lower bound. */
export function sizeText(size: RetainedSandboxSize | null): string {
  if (size === null) return "unknown";
  const text = `${formatBytes(size.bytes)}, ${size.entries} entr${size.entries === 1 ? "y" : "ies"}`;
  return size.lowerBound === null ? text : `at least ${text}`;
}
