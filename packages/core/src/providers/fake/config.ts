// environments.config for the fake provider (DESIGN.md section 8: "fault injection is a product
// feature"). Off by default: an environment without `faults` behaves exactly as before.
//   faults.fail       { op: n }            the next n calls of op on each lease fail (provider_fault_injected)
//   faults.hang       { op: n | "forever" } the next n calls never settle until their signal aborts
//   faults.loseReply  { op: n }            the next n calls take effect, then their reply is lost
//   faults.unconfirmedStop  n | "forever"  stopLease answers without confirming the stop
//   faults.resumeReplyLost  n              the next n resumes take effect, then their reply is lost
//                                          (the export-only retry then stops and retains again)
//   faults.corruptDelta     n              the next n delta exports disagree with their archive
//                                          (only for a fake that offers exportDelta)
//   faults.probeFailure     n              once the sandbox is first stopped, its next n probes fail:
//                                          inspect and the sentinel read each fail n times
//   turn              what exec does when the provider has no script of its own: exit code,
//                     result file and workspace files ({runId} is replaced by COPYBACK_RUN_ID;
//                     null deletes a path)
// Faults are armed per lease when it is acquired, from the config as it is then, and apply to
// that lease's calls only (acquire included). Unknown keys are kept for other readers.
import { z } from "zod";
import { DomainError } from "../../errors";
import { FAKE_OPERATIONS, FakeFaults } from "./faults";

const count = z.number().int().min(1).max(1_000_000);
const operation = z.enum(FAKE_OPERATIONS);

export const fakeFaultsConfig = z.strictObject({
  fail: z.partialRecord(operation, count).optional(),
  hang: z.partialRecord(operation, z.union([count, z.literal("forever")])).optional(),
  loseReply: z.partialRecord(operation, count).optional(),
  unconfirmedStop: z.union([count, z.literal("forever")]).optional(),
  /** R-EX-5 rehearsal: a resume that happened but whose reply never came back. */
  resumeReplyLost: count.optional(),
  /** R-EX-5 rehearsal: after the first stop, the probes of the exact sandbox (inspect, sentinel read) fail. */
  probeFailure: count.optional(),
  /** The host's delta verification refuses the next n delta exports (finalization falls back to the full export). */
  corruptDelta: count.optional(),
});
export type FakeFaultsConfig = z.infer<typeof fakeFaultsConfig>;

export const fakeTurnConfig = z.strictObject({
  exitCode: z.number().int().min(0).max(255).nullable().default(0),
  resultFile: z.string().max(1_048_576).nullable().default(null),
  files: z.record(z.string().min(1).max(4096), z.string().max(16_777_216).nullable()).default({}),
});
export type FakeTurnConfig = z.infer<typeof fakeTurnConfig>;

export const fakeEnvironmentConfig = z
  .object({
    faults: fakeFaultsConfig.optional(),
    turn: fakeTurnConfig.optional(),
  })
  .loose();
export type FakeEnvironmentConfig = z.infer<typeof fakeEnvironmentConfig>;

export function parseFakeConfig(config: unknown): FakeEnvironmentConfig {
  const parsed = fakeEnvironmentConfig.safeParse(config ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DomainError("invalid", "provider_config_invalid", `The fake environment's configuration is invalid: ${issue ? `${issue.path.join(".") || "config"}: ${issue.message}` : "unknown"}.`);
  }
  return parsed.data;
}

/** The configured faults as a fresh FakeFaults (null when none are configured). */
export function faultsFromConfig(config: FakeFaultsConfig | undefined): FakeFaults | null {
  if (!config) return null;
  const faults = new FakeFaults();
  let any = false;
  for (const [op, n] of Object.entries(config.fail ?? {})) {
    faults.failTimes(op as (typeof FAKE_OPERATIONS)[number], n as number);
    any = true;
  }
  for (const [op, n] of Object.entries(config.hang ?? {})) {
    faults.hang(op as (typeof FAKE_OPERATIONS)[number], n === "forever" ? Infinity : (n as number));
    any = true;
  }
  for (const [op, n] of Object.entries(config.loseReply ?? {})) {
    faults.loseReply(op as (typeof FAKE_OPERATIONS)[number], n as number);
    any = true;
  }
  if (config.resumeReplyLost !== undefined) {
    faults.loseReply("resume", config.resumeReplyLost);
    any = true;
  }
  if (config.probeFailure !== undefined) {
    faults.failProbesAfterStop(config.probeFailure);
    any = true;
  }
  if (config.corruptDelta !== undefined) {
    faults.corruptDelta(config.corruptDelta);
    any = true;
  }
  if (config.unconfirmedStop !== undefined) {
    faults.unconfirmedStop(config.unconfirmedStop === "forever" ? Infinity : config.unconfirmedStop);
    any = true;
  }
  return any ? faults : null;
}
