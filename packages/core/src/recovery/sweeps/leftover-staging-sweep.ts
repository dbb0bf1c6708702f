// Finalization staging that a dead controller left behind (finalization/leftover-staging.ts has
// the rule and why). Due: the instance's `staging/` directories named for an attempt whose run's
// coordinator settled, read in one query; each is judged again from a fresh read before it is
// removed (never following a link: removeStagingDir). Private files of this instance only: no host
// workspace, sandbox or record is touched.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { PrismaClient } from "@copyback/db/client";
import { decideLeftoverStaging, parseAttemptDirName, SETTLED_PHASES } from "../../finalization/leftover-staging";
import { removeStagingDir, STAGING_ROOT_RELATIVE } from "../../finalization/staging";
import type { Sweep, SweepLog } from "./sweep";

export interface LeftoverStagingUnit {
  name: string;
  runId: string;
}

export function leftoverStagingSweep(deps: { db: PrismaClient; instanceRoot: string; log?: SweepLog }): Sweep<LeftoverStagingUnit> {
  const root = join(deps.instanceRoot, STAGING_ROOT_RELATIVE);
  const phaseOf = async (runId: string) => deps.db.nativeRunFinalization.findUnique({ where: { runId }, select: { phase: true } });
  return {
    name: "leftover_staging",
    idOf: (unit) => unit.name,
    async due(limit) {
      let names: string[];
      try {
        names = await readdir(root);
      } catch (error) {
        if ((error as { code?: unknown }).code === "ENOENT") return [];
        throw error;
      }
      const candidates = names.flatMap((name) => {
        const parsed = parseAttemptDirName(name);
        return parsed ? [{ name, runId: parsed.runId }] : [];
      });
      if (candidates.length === 0) return [];
      const settled = await deps.db.nativeRunFinalization.findMany({
        where: { runId: { in: [...new Set(candidates.map((c) => c.runId))] }, phase: { in: [...SETTLED_PHASES] } },
        select: { runId: true },
      });
      const done = new Set(settled.map((s) => s.runId));
      return candidates.filter((c) => done.has(c.runId)).slice(0, limit);
    },
    async handle(unit) {
      const decision = decideLeftoverStaging(unit.name, await phaseOf(unit.runId));
      if (!decision.remove) return `left_${decision.reason}`;
      const dir = join(root, unit.name);
      await removeStagingDir(dir);
      deps.log?.info({ runId: unit.runId, staging: unit.name }, "reconciler removed a settled run's leftover staging directory");
      return "removed";
    },
  };
}
