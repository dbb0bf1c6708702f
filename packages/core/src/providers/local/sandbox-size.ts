// Capability `measureSandbox` of the local provider: the size of a sandbox directory, counted in
// this process by lstat (never following a link: a symlink is an entry of its own, whatever it
// points at, and a directory is entered only when lstat says it is one), one filesystem only
// (like `du -x`), within a time and entry budget.
//
// Why a walk here and not `du` in a child process: du's flags for apparent sizes and for a single
// count of hard links differ between GNU and BSD, it has no entry budget, a time budget would mean
// killing it and parsing a partial output, and its exit status mixes "could not read one
// directory" with "failed". This walk uses the same lstat-only rules as the export's
// (copyback/archive/workspace-walk.ts), is given back to the event loop every few hundred entries,
// and stops at the budget with a lower bound that says why.
//
// Counted: every entry below the root (the root itself not), and the bytes of regular files
// (st_size, a file with several hard links once). Names are read as bytes, so a name that is not
// UTF-8 (left out of an export) is still counted here. A directory that cannot be read is counted
// as an entry and makes the result a lower bound ("unreadable").
import { lstatSync, readdirSync, type BigIntStats } from "node:fs";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { errnoOf } from "../../errors";
import type { MeasureBudget, SandboxMeasurement, TreeSize } from "../types";

const ENTRIES_PER_TURN = 500;
const SLASH = Buffer.from("/");

export interface MeasureTreeOptions {
  budget: MeasureBudget;
  /** A directory below the root whose part is also counted on its own (the sandbox's workspace). */
  part?: string;
  signal?: AbortSignal;
  /** The clock (tests). */
  now?: () => number;
}

export interface MeasuredTree {
  total: TreeSize;
  /** The `part` directory's share (zeros when it does not exist). */
  part: TreeSize;
  lowerBound: SandboxMeasurement["lowerBound"];
}

/** Measures the tree below `root` (a real directory, not a link: anything else throws). */
export async function measureTree(root: string, options: MeasureTreeOptions): Promise<MeasuredTree> {
  const now = options.now ?? (() => performance.now());
  const deadline = now() + options.budget.timeMs;
  const rootStats = lstatSync(root, { bigint: true });
  if (!rootStats.isDirectory()) throw new Error(`${root} is not a directory (or is a symbolic link)`);
  const partPath = options.part === undefined ? null : Buffer.from(options.part);
  const total: TreeSize = { bytes: 0, entries: 0 };
  const part: TreeSize = { bytes: 0, entries: 0 };
  const seenInodes = new Set<bigint>();
  let lowerBound: SandboxMeasurement["lowerBound"] = null;
  let sinceYield = 0;

  // Depth first with an explicit stack: a deep tree cannot overflow the call stack.
  const stack: { path: Buffer; inPart: boolean }[] = [{ path: Buffer.from(root), inPart: false }];
  walk: while (stack.length > 0) {
    const dir = stack.pop()!;
    let names: Buffer[];
    try {
      names = readdirSync(dir.path, { encoding: "buffer" });
    } catch (error) {
      if (errnoOf(error) === "ENOENT") continue; // removed while measured
      lowerBound ??= "unreadable";
      continue;
    }
    for (const name of names) {
      if (total.entries >= options.budget.entries) {
        lowerBound = "entry_budget";
        break walk;
      }
      if (++sinceYield >= ENTRIES_PER_TURN) {
        sinceYield = 0;
        await yieldToEventLoop();
        if (options.signal?.aborted) {
          lowerBound = "time_budget";
          break walk;
        }
      }
      if (now() > deadline) {
        lowerBound = "time_budget";
        break walk;
      }
      const path = Buffer.concat([dir.path, SLASH, name]);
      let stats: BigIntStats;
      try {
        stats = lstatSync(path, { bigint: true });
      } catch (error) {
        if (errnoOf(error) === "ENOENT") continue;
        lowerBound ??= "unreadable";
        continue;
      }
      const inPart = dir.inPart || (partPath !== null && path.equals(partPath));
      // The part's own directory belongs to the total only; what is below it to both.
      const counts = dir.inPart ? [total, part] : [total];
      for (const c of counts) c.entries += 1;
      if (stats.isFile()) {
        const counted = stats.nlink > 1n && seenInodes.has(stats.ino);
        if (stats.nlink > 1n) seenInodes.add(stats.ino);
        if (!counted) for (const c of counts) c.bytes += Number(stats.size);
      } else if (stats.isDirectory() && stats.dev === rootStats.dev) {
        stack.push({ path, inPart });
      }
    }
  }
  return { total, part, lowerBound };
}
