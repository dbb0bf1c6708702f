// `copyback workspace history PATH [--limit N]`: which committed runs last wrote or deleted PATH
// (a file or directory inside a host workspace, absolute or relative to the current directory),
// newest first. The host workspace is the execution workspace whose directory
// contains PATH (both canonicalized with realpath; a deleted PATH is resolved through its nearest
// existing parent). Reads only.
import { realpath } from "node:fs/promises";
import path from "node:path";
import { workspacePathHistory } from "../../workspace/path-history";
import { withCliDatabase } from "../database";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import { table } from "../format";
import type { CommandContext, CommandResult } from "../io";

export const DEFAULT_HISTORY_LIMIT = 20;

/** realpath of `target`, or of its nearest existing ancestor joined with the rest (a deleted path). */
async function canonical(target: string): Promise<string> {
  const rest: string[] = [];
  let current = path.resolve(target);
  for (;;) {
    try {
      return path.join(await realpath(current), ...rest.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.resolve(target);
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

export async function workspaceHistory(ctx: CommandContext, opts: { path: string; limit: number }): Promise<CommandResult> {
  const target = await canonical(opts.path);
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const workspaces = await prisma.executionWorkspace.findMany({ select: { id: true, companyId: true, name: true, hostPath: true } });
    let best: { id: string; companyId: string; name: string; root: string } | null = null;
    for (const w of workspaces) {
      const root = await canonical(w.hostPath);
      const rel = path.relative(root, target);
      if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) continue;
      if (!best || root.length > best.root.length) best = { id: w.id, companyId: w.companyId, name: w.name, root };
    }
    if (!best) throw new CliError(EXIT.failed, "workspace_not_found", `${opts.path} is not inside any host workspace of this instance`);
    const relative = path.relative(best.root, target).split(path.sep).join("/");
    const history = await workspacePathHistory(prisma, { companyId: best.companyId, executionWorkspaceId: best.id, path: relative, limit: opts.limit });
    const issues = await prisma.issue.findMany({ where: { id: { in: history.entries.map((e) => e.issueId) } }, select: { id: true, identifier: true } });
    const identifier = new Map(issues.map((i) => [i.id, i.identifier]));
    const entries = history.entries.map((e) => ({ ...e, issueIdentifier: identifier.get(e.issueId) ?? null }));
    const json = { database: source, workspace: { id: best.id, name: best.name }, path: relative, entries };
    if (entries.length === 0) return { exitCode: EXIT.ok, json, text: [`no committed run wrote or deleted ${relative} in workspace ${best.name}`] };
    return {
      exitCode: EXIT.ok,
      json,
      text: [
        `${relative} in workspace ${best.name}, newest first (the first row is the last writer):`,
        ...table(["committed at", "change", "run", "issue"], entries.map((e) => [e.committedAt.toISOString(), e.change, e.runId, e.issueIdentifier ?? e.issueId])),
      ],
    };
  });
}
