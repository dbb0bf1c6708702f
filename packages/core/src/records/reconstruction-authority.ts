// R-RC-5: the reconstruction authority a run carries (heartbeat_runs.runner_profile_json key
// `reconstruction`): the delivered run gets it in the transaction that creates it, and a bounded
// retry of a run that carries it inherits it (runs/retry-run.ts), so "bounded retries keep the
// same reconstruction authority". It names the intent only: every claim and handoff rechecks the
// intent, its sources and the chain back to the delivered run (dispatch-gate.ts); the key by itself
// grants nothing. Parsed with zod at the boundary.
import { z } from "zod";

export const RECONSTRUCTION_AUTHORITY_KEY = "reconstruction";
export const RECONSTRUCTION_AUTHORITY_SCHEMA = "copyback.reconstruction-authority.v1";

const authoritySchema = z.object({ schema: z.literal(RECONSTRUCTION_AUTHORITY_SCHEMA), intentId: z.uuid() });
export type ReconstructionAuthority = z.infer<typeof authoritySchema>;

/** The authority a run carries: none, or the intent it names (malformed: present, and refused by the gate). */
export function readReconstructionAuthority(runnerProfileJson: unknown): { kind: "none" } | { kind: "present"; intentId: string } | { kind: "malformed" } {
  if (typeof runnerProfileJson !== "object" || runnerProfileJson === null || !(RECONSTRUCTION_AUTHORITY_KEY in runnerProfileJson)) return { kind: "none" };
  const parsed = authoritySchema.safeParse((runnerProfileJson as Record<string, unknown>)[RECONSTRUCTION_AUTHORITY_KEY]);
  return parsed.success ? { kind: "present", intentId: parsed.data.intentId } : { kind: "malformed" };
}

export function reconstructionAuthority(intentId: string): Record<string, ReconstructionAuthority> {
  return { [RECONSTRUCTION_AUTHORITY_KEY]: { schema: RECONSTRUCTION_AUTHORITY_SCHEMA, intentId } };
}
