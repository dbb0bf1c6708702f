// `copyback recovery list [--company ID] [--limit N]`: the open recovery actions of every company
// (or one), oldest first, with their task, run, cause, age and next action. Reads only.
import { withCliDatabase } from "../database";
import { EXIT } from "../exit-codes";
import { firstSentence, formatAge, table } from "../format";
import type { CommandContext, CommandResult } from "../io";
import { listOpenActions, toView } from "../recovery/action-view";

export const DEFAULT_LIST_LIMIT = 200;

export async function recoveryList(
  ctx: CommandContext,
  opts: { companyId?: string; limit: number },
): Promise<CommandResult> {
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const { rows, total } = await listOpenActions(prisma, opts);
    const now = new Date();
    const actions = rows.map((row) => toView(row, now));
    const json = { database: source, total, shown: actions.length, actions };
    const scope = opts.companyId === undefined ? "" : ` of company ${opts.companyId}`;
    if (actions.length === 0) {
      return { exitCode: EXIT.ok, json, text: [`no open recovery actions${scope}`] };
    }
    const text = [
      `${total} open recovery action${total === 1 ? "" : "s"}${scope}, oldest first:`,
      ...table(
        ["action", "company", "issue", "run", "cause", "age", "next action"],
        actions.map((a) => [
          a.id,
          a.companyName,
          a.issueIdentifier,
          a.runId ?? "-",
          a.cause,
          formatAge(a.ageSeconds * 1000),
          a.attested
            ? "attested: the reconciler is restoring the saved work"
            : firstSentence(a.nextAction ?? "-", 80),
        ]),
      ),
    ];
    if (total > actions.length)
      text.push(`... and ${total - actions.length} more (--limit N, or --company ID)`);
    text.push("details, evidence and the exact attestation call: copyback recovery show ACTION_ID");
    return { exitCode: EXIT.ok, json, text };
  });
}
