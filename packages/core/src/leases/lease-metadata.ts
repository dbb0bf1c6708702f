// The documents kept in `environment_leases.metadata`, each under its own key and each with a
// versioned `schema` tag. The column is JSON that anybody with database access can write, so
// every read parses the one key it needs here; an unknown version or a malformed document is an
// `invalid` result, never a pass: it grants nothing (no reuse, no admission, no cleanup claim).
import { z } from "zod";

export const WORKSPACE_SENTINEL_SCHEMA = "copyback.workspace-sentinel.v1";
export const STOP_INTENT_SCHEMA_V1 = "copyback.sandbox-stop-and-retain.v1";
export const STOP_INTENT_SCHEMA = "copyback.sandbox-stop-and-retain.v2";
export const STOP_RECEIPT_SCHEMA = "copyback.sandbox-stop-and-retain-receipt.v1";
export const DESTROY_INTENT_SCHEMA = "copyback.sandbox-destroy.v1";
export const SANDBOX_SIZE_SCHEMA = "copyback.sandbox-size.v1";

const nonEmpty = z.string().min(1);
const uuid = z.uuid();
const timestamp = z.iso.datetime({ offset: true });

/** The provider-side identity of the allocation (types.ts SandboxIdentity). */
export const sandboxIdentitySchema = z.strictObject({
  providerLeaseId: nonEmpty,
  fingerprint: nonEmpty,
});

/**
 * R-DT-2: written once, at acquisition, for a NEW ephemeral allocation, binding the lease to the
 * run that acquired it and to the exact provider allocation. Export-only resume (next issue)
 * requires it; recovery never creates one.
 */
export const workspaceSentinelSchema = z.strictObject({
  schema: z.literal(WORKSPACE_SENTINEL_SCHEMA),
  runId: uuid,
  leaseId: uuid,
  providerLeaseId: nonEmpty,
  allocationFingerprint: nonEmpty,
  /** 32 random bytes, hex: the sentinel cannot be guessed or recreated from the other fields. */
  nonce: z.string().regex(/^[0-9a-f]{64}$/),
  createdAt: timestamp,
});

/** R-SO-1 / R-EX-7: the stop-and-retain intent, v2 with an explicit plugin pin. */
export const stopIntentSchema = z.strictObject({
  schema: z.literal(STOP_INTENT_SCHEMA),
  companyId: uuid,
  runId: uuid,
  leaseId: uuid,
  providerLeaseId: nonEmpty,
  pluginId: nonEmpty,
  requestId: uuid,
  createdAt: timestamp,
});

/** R-EX-7: a v1 intent has no plugin pin; it is recovered with the lease's recorded plugin. */
const stopIntentV1Schema = stopIntentSchema.omit({ schema: true, pluginId: true }).extend({
  schema: z.literal(STOP_INTENT_SCHEMA_V1),
});

/**
 * R-SO-3: the plugin id under which the built-in fake provider is registered (default-registry.ts).
 * Its stop is its own `stopLease` operation, and only its receipts may say `builtin.stopLease`.
 */
export const BUILTIN_FAKE_PLUGIN_ID = "builtin.fake";

export type StopMethod = "environmentStopLease" | "builtin.stopLease";

/** R-SO-2 / R-SO-3: the one receipt method a plugin may give: `builtin.stopLease` for the built-in fake only. */
export function stopMethodFor(pluginId: string): StopMethod {
  return pluginId === BUILTIN_FAKE_PLUGIN_ID ? "builtin.stopLease" : "environmentStopLease";
}

/** R-SO-2 / R-SO-3: proof that the exact allocation was stopped with its files kept. */
export const stopReceiptSchema = z.strictObject({
  schema: z.literal(STOP_RECEIPT_SCHEMA),
  method: z.enum(["environmentStopLease", "builtin.stopLease"]),
  requestId: uuid,
  pluginId: nonEmpty,
  providerLeaseId: nonEmpty,
  stoppedAt: timestamp,
});

/**
 * A sandbox that may exist and must be destroyed, recorded on a `pending_cleanup` lease before
 * (or instead of) the provider's answer, so that no possibly existing sandbox is ever lost track
 * of: an acquisition whose reply never came (`acquire_unconfirmed`), or a destroy after the
 * commit that is in flight or could not be confirmed (`release`), or a warm reusable sandbox of an
 * environment whose policy no longer reuses (`policy_changed`). Nothing of the sandbox is worth
 * keeping in either case (nothing was seeded yet; the files are merged), so the cleanup sweep
 * destroys it through the pinned plugin (R-EX-6); destroy is idempotent.
 *
 * `providerLeaseId` is null when the provider never named the allocation (its acquire reply was
 * lost): acquire is idempotent per lease id, so the sweep learns it by acquiring again with this
 * `leaseId` and then destroys what it gets back.
 */
export const destroyIntentSchema = z.strictObject({
  schema: z.literal(DESTROY_INTENT_SCHEMA),
  companyId: uuid,
  runId: uuid,
  leaseId: uuid,
  pluginId: nonEmpty,
  providerLeaseId: nonEmpty.nullable(),
  // `policy_changed`: a warm sandbox of an environment that no longer reuses (retire-warm-sandboxes.ts).
  reason: z.enum(["acquire_unconfirmed", "release", "policy_changed"]),
  createdAt: timestamp,
});

/** Why the last provider call for this lease failed (diagnostics only; grants nothing). */
export const leaseFailureSchema = z.strictObject({
  code: nonEmpty,
  message: z.string(),
  at: timestamp,
});

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/**
 * How much a stopped, retained sandbox holds (provider capability `measureSandbox`, written by
 * leases/sandbox-size.ts after the confirmed stop was recorded). Bound to that stop: it names the
 * receipt's request id and allocation, and is read only while that receipt is the lease's (a
 * stopped sandbox's files do not change; once resumed they may). Diagnostics only: it grants
 * nothing. `lowerBound` says why the counts may be short (a budget ran out, a directory was
 * unreadable), null when they are complete.
 */
export const sandboxSizeSchema = z.strictObject({
  schema: z.literal(SANDBOX_SIZE_SCHEMA),
  pluginId: nonEmpty,
  providerLeaseId: nonEmpty,
  stopRequestId: uuid,
  workspaceBytes: count,
  workspaceEntries: count,
  sandboxBytes: count.nullable(),
  sandboxEntries: count.nullable(),
  lowerBound: z.enum(["time_budget", "entry_budget", "unreadable"]).nullable(),
  measuredAt: timestamp,
  durationMs: count,
});

export type WorkspaceSentinel = z.infer<typeof workspaceSentinelSchema>;
export type StopIntent = z.infer<typeof stopIntentSchema>;
export type StopReceiptRecord = z.infer<typeof stopReceiptSchema>;
export type LeaseFailure = z.infer<typeof leaseFailureSchema>;
export type DestroyIntent = z.infer<typeof destroyIntentSchema>;
export type SandboxIdentityRecord = z.infer<typeof sandboxIdentitySchema>;
export type SandboxSizeRecord = z.infer<typeof sandboxSizeSchema>;

/** The keys this module owns inside `environment_leases.metadata`. */
export const LEASE_METADATA_KEYS = {
  identity: "identity",
  isolated: "isolated",
  workspaceSentinel: "workspaceSentinel",
  stopIntent: "sandboxStopAndRetain",
  stopReceipt: "sandboxStopAndRetainReceipt",
  destroyIntent: "sandboxDestroy",
  failure: "failure",
  /**
   * Written when a reused lease's resume failed (acquire-lease.ts): the sandbox could not prove it
   * is the recorded one, so after its stop it is kept, never offered for reuse again
   * (lease-holds.ts). Never cleared by the lease services; it grants nothing.
   */
  reuseRefused: "reuseRefused",
  /** An operator's Discard in flight (sandboxes/discard-sandbox.ts): who, why, which actions. */
  discardIntent: "sandboxDiscard",
  /** The confirmed destruction receipt of a discarded sandbox: the evidence reconstruction needs. */
  destructionReceipt: "sandboxDestructionReceipt",
  /** How much the stopped sandbox holds, measured after its stop (sandboxSizeSchema). */
  sandboxSize: "sandboxSize",
} as const;
export type LeaseMetadataKey = (typeof LEASE_METADATA_KEYS)[keyof typeof LEASE_METADATA_KEYS];

export type MetadataRead<T> =
  | { kind: "present"; value: T }
  | { kind: "absent" }
  | { kind: "invalid"; message: string };

function entry(metadata: unknown, key: LeaseMetadataKey): { found: false } | { found: true; raw: unknown } | { invalid: string } {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) {
    return { invalid: "lease metadata is not a JSON object" };
  }
  if (!Object.hasOwn(metadata, key)) return { found: false };
  const raw = (metadata as Record<string, unknown>)[key];
  // A key explicitly set to null is a cleared document (transitionLease removes keys, but a
  // hand-written null must not be mistaken for a malformed one that blocks forever).
  return raw === null ? { found: false } : { found: true, raw };
}

function read<T>(metadata: unknown, key: LeaseMetadataKey, schema: z.ZodType<T>): MetadataRead<T> {
  const found = entry(metadata, key);
  if ("invalid" in found) return { kind: "invalid", message: found.invalid };
  if (!found.found) return { kind: "absent" };
  const parsed = schema.safeParse(found.raw);
  return parsed.success
    ? { kind: "present", value: parsed.data }
    : { kind: "invalid", message: `${key}: ${z.prettifyError(parsed.error)}` };
}

export const readIdentity = (metadata: unknown) => read(metadata, LEASE_METADATA_KEYS.identity, sandboxIdentitySchema);
export const readWorkspaceSentinel = (metadata: unknown) =>
  read(metadata, LEASE_METADATA_KEYS.workspaceSentinel, workspaceSentinelSchema);
export const readStopReceipt = (metadata: unknown) => read(metadata, LEASE_METADATA_KEYS.stopReceipt, stopReceiptSchema);
export const readLeaseFailure = (metadata: unknown) => read(metadata, LEASE_METADATA_KEYS.failure, leaseFailureSchema);
export const readIsolated = (metadata: unknown) => read(metadata, LEASE_METADATA_KEYS.isolated, z.boolean());

/**
 * The recorded size of a retained sandbox, if it belongs to the lease's current stop: the lease's
 * own stop receipt is present and names the same request, plugin and allocation as the size. A
 * size left from an earlier stop (the sandbox ran again since) or of another allocation is
 * `absent` here, as if never measured; a malformed one is `invalid`.
 */
export function readSandboxSize(metadata: unknown, lease: Omit<AllocationBinding, "leaseId">): MetadataRead<SandboxSizeRecord> {
  const size = read(metadata, LEASE_METADATA_KEYS.sandboxSize, sandboxSizeSchema);
  if (size.kind !== "present") return size;
  const receipt = readStopReceipt(metadata);
  if (receipt.kind !== "present") return { kind: "absent" };
  const s = size.value;
  const r = receipt.value;
  const current = s.stopRequestId === r.requestId && s.pluginId === r.pluginId && s.providerLeaseId === r.providerLeaseId;
  return current && s.pluginId === lease.pluginId && s.providerLeaseId === lease.providerLeaseId ? size : { kind: "absent" };
}

/** The lease row an intent must be bound to (its columns, as environment_leases holds them). */
export interface IntentBinding {
  id: string;
  companyId: string;
  runId: string | null;
  pluginId: string;
  providerLeaseId: string | null;
}

/** Why an intent does not belong to this lease row (null when it does): another company, run, lease or allocation. */
function bindingMismatch(intent: { companyId: string; runId: string; leaseId: string; providerLeaseId: string | null }, lease: IntentBinding): string | null {
  if (intent.leaseId !== lease.id) return "the intent names another lease";
  if (intent.companyId !== lease.companyId) return "the intent names another company";
  if (intent.runId !== lease.runId) return "the intent names another run than the lease's";
  if (intent.providerLeaseId !== lease.providerLeaseId) return "the intent names another provider allocation than the lease's";
  return null;
}

/**
 * R-EX-7: reads the stop intent of a lease and resolves its plugin pin. A v2 intent must pin the
 * lease's recorded plugin (an explicit mismatched pin is invalid); a v1 intent, written before
 * the pin existed, is read with the lease's recorded plugin. Either must name the lease row it
 * sits on, its company, its run and its provider allocation: an intent left on a lease that has
 * changed since (R-EX-5) grants no stop.
 */
export function readStopIntent(metadata: unknown, lease: IntentBinding): MetadataRead<StopIntent> {
  const found = entry(metadata, LEASE_METADATA_KEYS.stopIntent);
  if ("invalid" in found) return { kind: "invalid", message: found.invalid };
  if (!found.found) return { kind: "absent" };
  const invalid = (message: string): MetadataRead<StopIntent> => ({ kind: "invalid", message: `${LEASE_METADATA_KEYS.stopIntent}: ${message}` });
  let intent: StopIntent;
  const v2 = stopIntentSchema.safeParse(found.raw);
  if (v2.success) {
    if (v2.data.pluginId !== lease.pluginId) return invalid(`pinned plugin ${v2.data.pluginId} is not the lease's plugin ${lease.pluginId}`);
    intent = v2.data;
  } else {
    const v1 = stopIntentV1Schema.safeParse(found.raw);
    if (!v1.success) return invalid(z.prettifyError(v2.error));
    intent = { ...v1.data, schema: STOP_INTENT_SCHEMA, pluginId: lease.pluginId };
  }
  const mismatch = bindingMismatch(intent, lease);
  return mismatch ? invalid(mismatch) : { kind: "present", value: intent };
}

/**
 * Reads the destroy intent of a lease. Like the stop intent's v2 pin, an intent naming another
 * plugin, lease, company, run or allocation than the row it sits on is invalid: it grants no destroy.
 */
export function readDestroyIntent(metadata: unknown, lease: IntentBinding): MetadataRead<DestroyIntent> {
  const found = read(metadata, LEASE_METADATA_KEYS.destroyIntent, destroyIntentSchema);
  if (found.kind !== "present") return found;
  if (found.value.pluginId !== lease.pluginId) {
    return { kind: "invalid", message: `${LEASE_METADATA_KEYS.destroyIntent}: pinned plugin ${found.value.pluginId} is not the lease's plugin ${lease.pluginId}` };
  }
  const mismatch = bindingMismatch(found.value, lease);
  if (mismatch) return { kind: "invalid", message: `${LEASE_METADATA_KEYS.destroyIntent}: ${mismatch}` };
  return found;
}

/** The exact allocation a sentinel or receipt must be bound to. */
export interface AllocationBinding {
  leaseId: string;
  pluginId: string;
  providerLeaseId: string | null;
}

export type SentinelVerdict =
  | { kind: "valid"; sentinel: WorkspaceSentinel }
  | { kind: "missing" }
  | { kind: "invalid"; message: string }
  | { kind: "mismatch"; message: string };

/**
 * R-DT-2: whether the lease carries the acquisition-time sentinel of this run and allocation. A
 * missing sentinel (a legacy or reused allocation) is not valid; the caller stays blocked.
 */
export function verifyWorkspaceSentinel(
  metadata: unknown,
  expected: AllocationBinding & { runId: string; fingerprint: string },
): SentinelVerdict {
  const read = readWorkspaceSentinel(metadata);
  if (read.kind === "absent") return { kind: "missing" };
  if (read.kind === "invalid") return read;
  const s = read.value;
  if (s.leaseId !== expected.leaseId) return { kind: "mismatch", message: "the sentinel belongs to another lease" };
  if (s.runId !== expected.runId) return { kind: "mismatch", message: "the sentinel belongs to another run" };
  if (s.providerLeaseId !== expected.providerLeaseId || s.allocationFingerprint !== expected.fingerprint) {
    return { kind: "mismatch", message: "the sentinel belongs to another allocation" };
  }
  return { kind: "valid", sentinel: s };
}

export type ReceiptVerdict =
  | { kind: "confirmed"; receipt: StopReceiptRecord }
  | { kind: "missing" }
  | { kind: "invalid"; message: string }
  | { kind: "mismatch"; message: string };

/**
 * Whether a lease holds a confirmed stop receipt for its own allocation and plugin, given with
 * the one method that plugin may use (stopMethodFor), and no stop intent is still pending (a
 * pending intent means the last stop is not proven, R-EX-5). Only a receipt that passes here lets
 * a released lease be reused.
 */
export function confirmedStopReceipt(metadata: unknown, lease: Omit<AllocationBinding, "leaseId">): ReceiptVerdict {
  const intent = entry(metadata, LEASE_METADATA_KEYS.stopIntent);
  if ("invalid" in intent) return { kind: "invalid", message: intent.invalid };
  if (intent.found) return { kind: "mismatch", message: "a stop intent is still pending" };
  const read = readStopReceipt(metadata);
  if (read.kind === "absent") return { kind: "missing" };
  if (read.kind === "invalid") return read;
  const r = read.value;
  if (r.pluginId !== lease.pluginId) return { kind: "mismatch", message: "the receipt names another plugin" };
  if (r.providerLeaseId !== lease.providerLeaseId) return { kind: "mismatch", message: "the receipt names another allocation" };
  if (r.method !== stopMethodFor(lease.pluginId)) return { kind: "mismatch", message: `the receipt's method ${r.method} is not the one plugin ${lease.pluginId} may use` };
  return { kind: "confirmed", receipt: r };
}
