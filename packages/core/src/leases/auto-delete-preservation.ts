// R-DT-1: stop-only preservation on a provider that deletes stopped sandboxes on its own (the
// `autoDeletePolicy` capability). Before the stop, the controller disables auto-delete and reads
// the provider's record back; only a record that says "disabled" lets the stop proceed. A failed
// call, an unreadable record or one that still says "enabled" (or "unknown") leaves the cleanup
// pending for the restart sweep: it never falls back to stopping anyway or to a destroy, because
// a stopped sandbox the provider may delete is not preserved.
import { failureOf } from "./lease-failure";
import type { AutoDeletePolicy, EnvironmentProvider, LeaseHandle } from "../providers/types";

export type AutoDeleteVerdict =
  | { kind: "confirmed" }
  | { kind: "unconfirmed"; code: "auto_delete_unconfirmed"; message: string };

/** Pure: whether the provider's read-back record proves auto-delete is off. */
export function judgeAutoDeleteReadback(policy: AutoDeletePolicy | null | undefined): AutoDeleteVerdict {
  if (policy?.autoDelete === "disabled") return { kind: "confirmed" };
  const said = policy?.autoDelete ?? "nothing";
  return {
    kind: "unconfirmed",
    code: "auto_delete_unconfirmed",
    message: `The provider's record does not confirm that auto-delete is disabled (it says ${said}); the sandbox is not stopped until it does.`,
  };
}

export type AutoDeletePreservation =
  | { kind: "confirmed" }
  | { kind: "pending"; code: "auto_delete_unconfirmed" | "auto_delete_failed"; message: string };

/** Disables auto-delete and reads the record back (the plugin advertises and implements `autoDeletePolicy`). */
export async function preserveFromAutoDelete(
  plugin: EnvironmentProvider & Required<Pick<EnvironmentProvider, "disableAutoDelete" | "readAutoDeletePolicy">>,
  handle: LeaseHandle,
): Promise<AutoDeletePreservation> {
  let policy: AutoDeletePolicy;
  try {
    await plugin.disableAutoDelete(handle);
    // A fresh read of the provider's record, never the disable call's own answer.
    policy = await plugin.readAutoDeletePolicy(handle);
  } catch (error) {
    const failure = failureOf(error, "auto_delete_failed");
    return { kind: "pending", code: "auto_delete_failed", message: `Disabling the provider's auto-delete failed: ${failure.message}` };
  }
  const verdict = judgeAutoDeleteReadback(policy);
  return verdict.kind === "confirmed" ? verdict : { kind: "pending", code: verdict.code, message: verdict.message };
}
