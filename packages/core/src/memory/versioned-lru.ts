// In-process memory of values by key, each valid for one version of its source (a database row's
// version, a file's identity) and handed out only for exactly that version: what the stat cache
// memory (providers/local/stat-cache-memory.ts) and the descriptor cache
// (finalization/descriptor-cache.ts) keep. Bounded by a number of values and a total weight (the
// entries they hold), least recently used dropped first; a value heavier than the whole bound is
// not kept. Pure memory.

export interface VersionedLruLimits<V> {
  maxValues: number;
  maxWeight: number;
  weigh(value: V): number;
}

interface Kept<V> {
  version: string;
  value: V;
  weight: number;
}

export class VersionedLru<V> {
  readonly #byKey = new Map<string, Kept<V>>();
  #weight = 0;

  constructor(private readonly limits: VersionedLruLimits<V>) {}

  /** The version remembered for this key, if any. */
  versionOf(key: string): string | undefined {
    return this.#byKey.get(key)?.version;
  }

  /** The value remembered with exactly this version, or undefined. */
  get(key: string, version: string): V | undefined {
    const kept = this.#byKey.get(key);
    if (!kept || kept.version !== version) return undefined;
    // Most recently used last: the oldest is the first dropped.
    this.#byKey.delete(key);
    this.#byKey.set(key, kept);
    return kept.value;
  }

  set(key: string, version: string, value: V): void {
    this.forget(key);
    const weight = this.limits.weigh(value);
    if (weight > this.limits.maxWeight) return;
    this.#byKey.set(key, { version, value, weight });
    this.#weight += weight;
    while (this.#byKey.size > this.limits.maxValues || this.#weight > this.limits.maxWeight) {
      this.forget(this.#byKey.keys().next().value as string);
    }
  }

  forget(key: string): void {
    const kept = this.#byKey.get(key);
    if (!kept) return;
    this.#weight -= kept.weight;
    this.#byKey.delete(key);
  }

  get size(): number {
    return this.#byKey.size;
  }
}
