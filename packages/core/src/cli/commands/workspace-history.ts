// `copyback workspace history PATH [--limit N]`: which committed runs last wrote or deleted PATH
// (a file or directory inside a host workspace, absolute or relative to the current directory),
// newest first. The host workspace is the execution workspace whose directory
// contains PATH (both canonicalized with realpath; a deleted PATH is resolved through its nearest
// existing parent). Reads only.
//
// Issue 23 (host affinity): only this host's workspaces (and unbound ones) are matched. A path is
// resolved on this host's disk; another host's workspace of the same directory name holds other
// files, and its history would be answered for a file it never had. A path only inside another
// host's workspace is refused with workspace_on_other_host, naming that host.
import { realpath } from "node:fs/promises";
import path from "node:path";
import { boundElsewhere, readHostId } from "../../deployment/host-id";
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
  // Read, never created: a root no worker ever ran on has no host id, so only unbound workspaces are its.
  const self = (await readHostId({ instanceRoot: ctx.home, ...(ctx.env.hostId !== undefined ? { configured: ctx.env.hostId } : {}) }))?.hostId ?? "";
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const workspaces = await prisma.executionWorkspace.findMany({ select: { id: true, companyId: true, name: true, hostPath: true, hostId: true } });
    let best: { id: string; companyId: string; name: string; root: string } | null = null;
    let elsewhere: { name: string; hostId: string } | null = null;
    for (const w of workspaces) {
      const root = await canonical(w.hostPath);
      const rel = path.relative(root, target);
      if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) continue;
      const other = boundElsewhere(w.hostId, self);
      if (other !== null) {
        elsewhere ??= { name: w.name, hostId: other };
        continue;
      }
      if (!best || root.length > best.root.length) best = { id: w.id, companyId: w.companyId, name: w.name, root };
    }
    if (!best && elsewhere) {
      throw new CliError(EXIT.failed, "workspace_on_other_host", `${opts.path} is inside workspace ${elsewhere.name}, which is bound to host ${elsewhere.hostId}; run this on that host`);
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
