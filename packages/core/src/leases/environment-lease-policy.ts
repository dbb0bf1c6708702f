// Changing an environment's lease policy (environments.default_lease_policy; `copyback environment
// configure --lease-policy`), pure: the value checked against the schema's enum, and what
// the change means for the leases the environment already has, in words.
//
// What is safe: the policy is read at acquisition only (acquire-lease.ts: the environment's default
// when the run names none) and copied onto each lease, and every later decision reads the LEASE's
// own policy (release-policy.ts, the reuse query, the recovery paths). So a change is never written
// onto existing leases: an active lease is released by the policy it was acquired with, a held
// lease stays held by lease-holds.ts whatever the environment says (R-ORP-3, R-EX-4), and a lease
// rewritten to `ephemeral` would lack the acquisition-time sentinel export-only resume requires
// (R-DT-2). Only sandboxes acquired after the change's commit use the new policy (an acquisition
// that read the environment just before it still gets the old one). The one exception is a warm
// sandbox no run will reuse under the new policy: retire-warm-sandboxes.ts destroys it.
import { z } from "zod";
import { LEASE_POLICIES, type LeasePolicy } from "./lease-types";

const leasePolicySchema = z.enum(LEASE_POLICIES as [LeasePolicy, ...LeasePolicy[]]);

export type LeasePolicyParse = { ok: true; policy: LeasePolicy } | { ok: false; message: string };

export function parseLeasePolicy(raw: string): LeasePolicyParse {
  const parsed = leasePolicySchema.safeParse(raw);
  if (parsed.success) return { ok: true, policy: parsed.data };
  return { ok: false, message: `--lease-policy must be one of ${LEASE_POLICIES.join(", ")}, not ${JSON.stringify(raw)}` };
}

/** The environment's leases that still exist, as the change leaves them. */
export interface ExistingLeases {
  /** In use by a run (status active). */
  active: number;
  /** Holding files for recovery (lease-holds.ts): never reused or destroyed by a policy change. */
  held: number;
  /** Released, stopped `reuse_by_environment` sandboxes that hold nothing: what reuse resumes. */
  reusable: number;
}

export interface LeasePolicyChange {
  from: LeasePolicy;
  to: LeasePolicy;
  existing: ExistingLeases;
  /** The warm sandboxes the change gave a destroy intent (retire-warm-sandboxes.ts); absent: none. */
  retiredLeaseIds?: readonly string[];
}

export function leasePolicyChangeNotes(change: LeasePolicyChange): string[] {
  if (change.from === change.to) return [`lease policy already ${change.to}: unchanged`];
  const { active, held, reusable } = change.existing;
  const notes = [
    `lease policy ${change.from} -> ${change.to}: only sandboxes acquired from now on use ${change.to}`,
    `existing leases keep the policy they were acquired with: ${active} active (released by its own policy when its run ends), ${held} held for recovery (still held, never reused or destroyed)`,
  ];
  const retired = change.retiredLeaseIds?.length ?? 0;
  if (reusable > 0 && change.to !== "reuse_by_environment") {
    notes.push(
      `${retired} of ${reusable} warm reuse_by_environment sandbox${reusable === 1 ? "" : "es"} (released, holding nothing for recovery) will be destroyed by the lease cleanup sweep: no run reuses ${reusable === 1 ? "it" : "them"} under ${change.to}${retired < reusable ? " (the others were taken or held meanwhile and are left as they are)" : ""}`,
    );
  }
  return notes;
}
