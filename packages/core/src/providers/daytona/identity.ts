// Which Daytona sandbox belongs to which lease: copyback's labels on it (company, environment,
// run, lease and a random allocation nonce made at creation), and the fingerprint derived from
// the sandbox's id, creation time and that nonce. A sandbox replaced under the same name (or a
// name taken by someone else) has another fingerprint, and resume refuses it.
import type { Sandbox } from "@daytonaio/sdk";
import { DomainError } from "../../errors";
import type { LeaseHandle } from "../types";

export const LABELS = {
  company: "copyback.company",
  environment: "copyback.environment",
  run: "copyback.run",
  lease: "copyback.lease",
  allocation: "copyback.allocation",
} as const;

/** Lease ids become part of a sandbox name: nothing that could mean something else. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function sandboxNameOf(leaseId: string): string {
  if (!SAFE_ID.test(leaseId)) throw new DomainError("invalid", "provider_lease_id_invalid", `Not a usable lease id: ${JSON.stringify(leaseId)}.`);
  return `copyback-${leaseId}`;
}

type SandboxFacts = Pick<Sandbox, "id" | "createdAt" | "labels">;

export function fingerprintOf(sandbox: SandboxFacts): string {
  return `daytona:${sandbox.id}:${sandbox.createdAt ?? "?"}:${sandbox.labels?.[LABELS.allocation] ?? "?"}`;
}

export interface Owner {
  companyId: string;
  environmentId: string;
  runId: string;
  leaseId: string;
}

/** Whether every copyback label of the sandbox names this owner (labels set at creation only). */
export function ownedBy(sandbox: SandboxFacts, owner: Owner): boolean {
  const labels = sandbox.labels ?? {};
  return (
    labels[LABELS.company] === owner.companyId &&
    labels[LABELS.environment] === owner.environmentId &&
    labels[LABELS.run] === owner.runId &&
    labels[LABELS.lease] === owner.leaseId &&
    typeof labels[LABELS.allocation] === "string"
  );
}

/** The lease check of every later call: the sandbox must carry this lease's label. */
export function belongsToLease(sandbox: SandboxFacts, lease: LeaseHandle): boolean {
  return sandbox.labels?.[LABELS.lease] === lease.leaseId;
}

export function foreignSandbox(sandboxId: string, leaseId: string): DomainError {
  return new DomainError("conflict", "provider_sandbox_foreign", `The Daytona sandbox ${sandboxId} does not belong to lease ${leaseId}; it is left alone.`, { sandboxId });
}
