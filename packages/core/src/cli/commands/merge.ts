// `copyback merge --baseline M --archive A --target D`: the host side of a copyback, for tests
// and repairs. Per attempt: validate and extract the archive into a private staging directory
// (extractValidatedArchive validates first; a rejected archive is never extracted, R-UA-2), then
// mergeSnapshot into the target under its directory-merge lock. R-RR-1: a failure before any
// host write (a held lock, ...) is retried up to three attempts in total; `--no-retries` makes
// one attempt only. The staging directory is removed whatever happens.
import { extractValidatedArchive } from "../../copyback/archive/index";
import type { ArchiveViolation } from "../../copyback/archive/index";
import { DirectoryMergeLocks } from "../../copyback/locks/index";
import { compileExclude } from "../../copyback/manifest/index";
import {
  mergeSnapshot,
  runWithCopybackRetries,
  type MergeConflict,
  type MergeOutcome,
} from "../../copyback/merge/index";
import { messageOf } from "../../errors";
import { EXIT } from "../exit-codes";
import { capped, table } from "../format";
import { readManifestFile, requireDirectory, requireFile } from "../input-files";
import { createStagingDir, ensureInstanceRoot, removeStagingDir } from "../instance-root";
import type { CommandContext, CommandResult } from "../io";

export interface MergeCommandOptions {
  baseline: string;
  archive: string;
  target: string;
  exclude: string[];
  retries: boolean;
  /** Per attempt; the locks' default (30 s) when undefined. */
  lockTimeoutMs?: number;
  /** First retry delay (R-RR-1 default 250 ms, then 4x). */
  retryBackoffMs?: number;
}

const SHOWN_PATHS = 20;

export async function mergeCommand(
  ctx: CommandContext,
  opts: MergeCommandOptions,
): Promise<CommandResult> {
  // Every input is checked before anything is created or locked: bad input changes nothing.
  const baseline = await readManifestFile(opts.baseline);
  await requireFile(opts.archive, "The archive");
  await requireDirectory(opts.target, "The target");
  compileExclude(opts.exclude);
  const home = await ensureInstanceRoot(ctx.home);
  const locks = new DirectoryMergeLocks({
    instanceRoot: home,
    ...(opts.lockTimeoutMs === undefined ? {} : { timeoutMs: opts.lockTimeoutMs }),
  });

  let attempts = 0;
  const attempt = async (): Promise<MergeOutcome> => {
    const staging = await createStagingDir(home, "merge");
    try {
      await extractValidatedArchive(opts.archive, staging);
      return await mergeSnapshot({
        target: opts.target,
        baseline,
        snapshotDir: staging,
        locks,
        exclude: opts.exclude,
        // The staging copy is ours alone: its files may be renamed into the host.
        consumeSnapshot: true,
      });
    } finally {
      await removeStagingDir(staging);
    }
  };

  let outcome: MergeOutcome;
  try {
    outcome = await runWithCopybackRetries(
      (n) => {
        attempts = n;
        return attempt();
      },
      {
        retries: opts.retries,
        ...(opts.retryBackoffMs === undefined ? {} : { backoffMs: opts.retryBackoffMs }),
        onRetry: ({ attempt: n, delayMs, error, failure }) =>
          ctx.note(
            `attempt ${n} failed before any host write (${failure.reason}: ${messageOf(error)}); retrying in ${delayMs} ms`,
          ),
      },
    );
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "unsafe_archive") {
      return rejected(
        opts.target,
        attempts,
        (error as { violations: ArchiveViolation[] }).violations,
      );
    }
    if (code === "merge_conflict") {
      return conflicted(opts.target, attempts, (error as { conflicts: MergeConflict[] }).conflicts);
    }
    throw error;
  }

  if (outcome.kind === "unchanged") {
    return {
      exitCode: EXIT.ok,
      json: { target: opts.target, outcome: "unchanged", attempts, written: [], deleted: [] },
      text: ["unchanged: the snapshot equals the baseline; the host was not read or written"],
    };
  }
  return {
    exitCode: EXIT.ok,
    json: {
      target: opts.target,
      outcome: "applied",
      attempts,
      counts: { written: outcome.written.length, deleted: outcome.deleted.length },
      written: outcome.written,
      deleted: outcome.deleted,
    },
    text: [
      outcome.written.length + outcome.deleted.length === 0
        ? "applied: nothing left to write (the host already holds every change of the snapshot)"
        : `applied: ${outcome.written.length} written, ${outcome.deleted.length} deleted (durable on disk)`,
      ...(outcome.written.length > 0
        ? ["  written:", ...capped(outcome.written, SHOWN_PATHS)]
        : []),
      ...(outcome.deleted.length > 0
        ? ["  deleted:", ...capped(outcome.deleted, SHOWN_PATHS)]
        : []),
    ],
  };
}

function rejected(target: string, attempts: number, violations: ArchiveViolation[]): CommandResult {
  return {
    exitCode: EXIT.failed,
    json: { target, outcome: "rejected", attempts, violations },
    text: [
      `rejected: the archive is unsafe (${violations.length} violation(s)); nothing was extracted or written`,
      ...table(
        ["code", "archive path", "detail"],
        violations.map((v) => [v.code, v.path === "" ? "(whole archive)" : v.path, v.detail]),
      ),
    ],
  };
}

function conflicted(target: string, attempts: number, conflicts: MergeConflict[]): CommandResult {
  return {
    exitCode: EXIT.failed,
    json: { target, outcome: "conflict", attempts, conflicts },
    text: [
      `conflict: ${conflicts.length} conflict(s) with host changes since the baseline; nothing was written`,
      ...table(
        ["path", "kind", "detail"],
        conflicts.map((c) => [c.path, c.kind, c.detail]),
      ),
    ],
  };
}
