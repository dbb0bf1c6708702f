// The prepared workspace descriptors this process parsed lately, by the version of the database
// row they were read from (workspace-descriptor.ts: id, xmin, ctid). A run reads its descriptor
// before the agent starts (runtime selection) and again in finalization; the second read then
// costs a version check instead of moving and validating the whole baseline manifest once more
// (about 10,000 entries, 25 to 60 ms of a copyback that changed nothing).
//
// Pure memory, bounded: a few descriptors and a bounded number of baseline entries in all, the
// oldest dropped first. An entry is only ever used for the same row version of the same run's
// descriptor, and every value handed out is a fresh copy around the frozen baseline, so no caller
// can change what the next one gets.
import { VersionedLru } from "../memory/versioned-lru";
import type { PreparedWorkspaceDescriptor } from "../workspace/prepared-descriptor";

const MAX_DESCRIPTORS = 8;
/** About one 200,000-entry workspace (the largest workspace a copyback is measured with), or many ordinary ones. */
const MAX_BASELINE_ENTRIES = 200_000;

export class DescriptorCache {
  readonly #memory = new VersionedLru<PreparedWorkspaceDescriptor>({
    maxValues: MAX_DESCRIPTORS,
    maxWeight: MAX_BASELINE_ENTRIES,
    weigh: (descriptor) => descriptor.baseline.entries.length,
  });

  /** The row version remembered for this run's descriptor, if any. */
  versionOf(runKey: string): string | undefined {
    return this.#memory.versionOf(runKey);
  }

  /** A copy of the descriptor remembered with exactly this row version, or undefined. */
  get(runKey: string, version: string): PreparedWorkspaceDescriptor | undefined {
    const descriptor = this.#memory.get(runKey, version);
    return descriptor && copyOf(descriptor);
  }

  /** Remembers a descriptor parsed from the row of this version (its baseline is frozen). */
  set(runKey: string, version: string, descriptor: PreparedWorkspaceDescriptor): void {
    this.#memory.set(runKey, version, copyOf(descriptor));
  }
}

/** Everything but the frozen baseline copied, so a caller's change stays its own. */
function copyOf(descriptor: PreparedWorkspaceDescriptor): PreparedWorkspaceDescriptor {
  return { ...descriptor, excludedPaths: [...descriptor.excludedPaths], seed: { ...descriptor.seed } };
}
