// One acquisition's wait (what it waits for, since when, and why it has not got the lock yet) and
// the LockTimeoutError it ends in at the deadline: the reason, the bounded owner sidecar's claim
// (diagnostic only, R-LK-3) and no host path (R-UA-4).
import { performance } from "node:perf_hooks";
import { LockTimeoutError, shortHash, type LockTimeoutReason } from "./errors";
import { LEGACY_UPGRADE_STEPS, legacyLockPresent } from "./legacy-lock";
import { relativeLockName, type LockFiles } from "./lock-paths";
import { readOwnerSidecar } from "./owner-sidecar";

export interface Wait {
  files: LockFiles;
  target: string;
  started: number;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  reason: LockTimeoutReason;
  ahead: number | null;
}

export async function timeoutError(wait: Wait): Promise<LockTimeoutError> {
  const { files } = wait;
  const owner = await readOwnerSidecar(files.ownerFile);
  const waitedMs = Math.round(performance.now() - wait.started);
  const legacy = legacyLockPresent(files.legacyDir);
  const reason: LockTimeoutReason = legacy ? "legacy_lock_directory" : wait.reason;
  const prefix = `Timed out after ${formatSeconds(waitedMs)} waiting for the directory-merge lock ${shortHash(files.hash)}`;
  let message: string;
  if (reason === "legacy_lock_directory") {
    message = `${prefix}: the legacy lock directory ${relativeLockName(files.hash, ".lock/")} blocks admission. ${LEGACY_UPGRADE_STEPS}`;
  } else if (reason === "queued") {
    message = `${prefix}: ${wait.ahead ?? "some"} earlier waiter(s) from other processes are still queued.`;
  } else {
    const claim =
      owner.status === "valid"
        ? `its owner record names pid ${owner.pid}${owner.hostname ? ` on ${owner.hostname}` : ""} since ${owner.createdAt}`
        : `its owner record is ${owner.status}`;
    message = `${prefix}: another writer holds it (${claim}; the record is diagnostic only).`;
  }
  const { target: _target, ...ownerWithoutTarget } = owner; // R-UA-4: no host path
  return new LockTimeoutError(message, {
    lockHash: files.hash,
    reason,
    waitedMs,
    timeoutMs: wait.timeoutMs,
    owner: ownerWithoutTarget,
    legacyDirectory: legacy ? relativeLockName(files.hash, ".lock/") : null,
    waitersAhead: wait.ahead,
  });
}

function formatSeconds(ms: number): string {
  return ms >= 10_000 ? `${Math.round(ms / 1000)} s` : `${(ms / 1000).toFixed(1)} s`;
}
