// How much a retained sandbox holds (the Retained list's age and size, where the provider tells),
// measured once, right after its confirmed stop was recorded (release-lease.ts requestStop: the
// live release of a failed run or a reused policy, a refused reuse's stop, the cleanup sweep's
// takeover; every stop-and-retain goes through it). A stopped sandbox's files do not change, so
// the one measurement holds until the sandbox runs again, when its stop receipt is consumed and
// the size, bound to that receipt (lease-metadata.ts readSandboxSize), stops being read.
//
// The web process has no provider registry; it reads what is recorded here. Best effort by
// contract: the stop is already recorded when this starts, a provider without `measureSandbox`
// is not asked, and a failed, refused or late measurement records nothing and throws nothing.
// Bounded: the provider gets a time and entry budget (a lower bound past it, flagged), and a
// provider that overruns it is abandoned after a grace period.
import { hasCapability } from "../providers/registry";
import type { EnvironmentProvider, MeasureBudget } from "../providers/types";
import { LEASE_METADATA_KEYS, SANDBOX_SIZE_SCHEMA, sandboxSizeSchema, type SandboxSizeRecord, type StopReceiptRecord } from "./lease-metadata";
import type { LeaseRow } from "./lease-types";
import { patchLease, type LeaseDb } from "./transition-lease";

/** Two seconds or 250,000 entries: a stop's release is not held longer for a size. */
export const SANDBOX_MEASURE_BUDGET: MeasureBudget = { timeMs: 2_000, entries: 250_000 };
/** How long past its time budget a provider's answer is still awaited. */
const GRACE_MS = 1_000;

export interface SandboxSizeOptions {
  budget?: MeasureBudget;
  now?: () => Date;
}

/**
 * Measures the stopped sandbox of `lease` through its pinned plugin and records the size on the
 * lease, if the lease is still released with exactly `receipt`. Returns what was recorded, or
 * null (no capability, the provider failed or overran, its answer was malformed, or the lease
 * moved on). Never throws.
 */
export async function recordRetainedSandboxSize(
  db: LeaseDb,
  plugin: EnvironmentProvider,
  lease: Pick<LeaseRow, "id" | "pluginId">,
  receipt: StopReceiptRecord,
  options: SandboxSizeOptions = {},
): Promise<SandboxSizeRecord | null> {
  if (!hasCapability(plugin, "measureSandbox")) return null;
  const budget = options.budget ?? SANDBOX_MEASURE_BUDGET;
  const now = options.now ?? (() => new Date());
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  try {
    const started = Date.now();
    const overrun = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new Error("the provider overran its measurement budget"));
      }, budget.timeMs + GRACE_MS);
    });
    const handle = { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId: receipt.providerLeaseId };
    const measured = await Promise.race([plugin.measureSandbox(handle, { budget, signal: abort.signal }), overrun]);
    // The plugin's answer is parsed like any stored document: a malformed one records nothing.
    const parsed = sandboxSizeSchema.safeParse({
      schema: SANDBOX_SIZE_SCHEMA,
      pluginId: receipt.pluginId,
      providerLeaseId: receipt.providerLeaseId,
      stopRequestId: receipt.requestId,
      workspaceBytes: measured.workspace?.bytes,
      workspaceEntries: measured.workspace?.entries,
      sandboxBytes: measured.sandbox === null ? null : measured.sandbox?.bytes,
      sandboxEntries: measured.sandbox === null ? null : measured.sandbox?.entries,
      lowerBound: measured.lowerBound,
      measuredAt: now().toISOString(),
      durationMs: Math.max(0, Math.round(Date.now() - started)),
    });
    if (!parsed.success) return null;
    // Only onto the stop it measured: a lease resumed (or stopped again) since is left alone.
    const written = await patchLease(db, {
      leaseId: lease.id,
      status: "released",
      expectMetadata: { key: LEASE_METADATA_KEYS.stopReceipt, value: receipt },
      metadataPatch: { [LEASE_METADATA_KEYS.sandboxSize]: parsed.data },
    });
    return written ? parsed.data : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}
