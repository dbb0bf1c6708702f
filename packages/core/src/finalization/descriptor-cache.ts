// The prepared workspace descriptors this process parsed lately, by the version of the database
// row they were read from (workspace-descriptor.ts: id, xmin, ctid). A run reads its descriptor
// before the agent starts (runtime selection) and again in finalization; the second read then
// costs a version check instead of moving and validating the whole baseline manifest once more
// (issue 14: about 10,000 entries, 25 to 60 ms of a copyback that changed nothing).
//
// Pure memory, bounded: a few descriptors and a bounded number of baseline entries in all, the
// oldest dropped first. An entry is only ever used for the same row version of the same run's
// descriptor, and every value handed out is a fresh copy around the frozen baseline, so no caller
// can change what the next one gets.
import type { PreparedWorkspaceDescriptor } from "../workspace/prepared-descriptor";

const MAX_DESCRIPTORS = 8;
/** About one 200,000-entry workspace (issue 14's large case), or many ordinary ones. */
const MAX_BASELINE_ENTRIES = 200_000;

interface Cached {
  version: string;
  descriptor: PreparedWorkspaceDescriptor;
}

export class DescriptorCache {
  readonly #byRun = new Map<string, Cached>();
  #entries = 0;

  /** The row version remembered for this run's descriptor, if any. */
  versionOf(runKey: string): string | undefined {
    return this.#byRun.get(runKey)?.version;
  }

  /** A copy of the descriptor remembered with exactly this row version, or undefined. */
  get(runKey: string, version: string): PreparedWorkspaceDescriptor | undefined {
    const cached = this.#byRun.get(runKey);
    if (!cached || cached.version !== version) return undefined;
    // Most recently used last: the oldest is the first dropped.
    this.#byRun.delete(runKey);
    this.#byRun.set(runKey, cached);
    return copyOf(cached.descriptor);
  }

  /** Remembers a descriptor parsed from the row of this version (its baseline is frozen). */
  set(runKey: string, version: string, descriptor: PreparedWorkspaceDescriptor): void {
    this.#drop(runKey);
    const size = descriptor.baseline.entries.length;
    if (size > MAX_BASELINE_ENTRIES) return;
    this.#byRun.set(runKey, { version, descriptor: copyOf(descriptor) });
    this.#entries += size;
    while (this.#byRun.size > MAX_DESCRIPTORS || this.#entries > MAX_BASELINE_ENTRIES) {
      this.#drop(this.#byRun.keys().next().value as string);
    }
  }

  #drop(runKey: string): void {
    const cached = this.#byRun.get(runKey);
    if (!cached) return;
    this.#entries -= cached.descriptor.baseline.entries.length;
    this.#byRun.delete(runKey);
  }
}

/** Everything but the frozen baseline copied, so a caller's change stays its own. */
function copyOf(descriptor: PreparedWorkspaceDescriptor): PreparedWorkspaceDescriptor {
  return { ...descriptor, excludedPaths: [...descriptor.excludedPaths], seed: { ...descriptor.seed } };
}
