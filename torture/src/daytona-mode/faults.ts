// The Daytona emulator's faults as nemesis kinds (`--provider daytona` only; loops/nemesis.ts draws
// them with the same seeded RNG as the others). Each is a `fault` operation: armed faults are ok
// once queued for the next matching call (whether and where it hit is the daytona.fault_hit
// observation); the changes behind the controller's back are ok once made, fail when no sandbox
// was in a state Daytona would make them from.
//   daytona_5xx          500/502/503 on a control or toolbox call (the SDK's calls are retried)
//   daytona_429          429 with Retry-After 1-3 s
//   daytona_lost_reply   the call takes effect, its answer is lost (the connection dropped)
//   daytona_truncate     a download whose body ends early
//   daytona_never_confirms  a stop left `stopping` (confirmed late, 20-60 s on)
//   daytona_hang         a call held 2-15 s before it is answered (or the client gives up)
//   daytona_autodelete_ignored  an auto-delete change answered but not applied (R-DT-1's read-back)
//   daytona_archive      Daytona archives a stopped sandbox on its own (R-DT-4)
//   daytona_auto_delete  Daytona auto-deletes a stopped or archived sandbox whose auto-delete is
//                        enabled (never one whose interval is disabled: Daytona would not)
import type { History } from "../history";
import type { Rng } from "../rng";
import type { ArmedFault, TortureEmulator } from "./emulator";

export const DAYTONA_WEIGHTS = {
  daytona_5xx: 3,
  daytona_429: 2,
  daytona_lost_reply: 3,
  daytona_truncate: 2,
  daytona_never_confirms: 1,
  daytona_hang: 2,
  daytona_autodelete_ignored: 1,
  daytona_archive: 1,
  daytona_auto_delete: 1,
};
export type DaytonaFaultKind = keyof typeof DAYTONA_WEIGHTS;

// The calls the product makes most (a fault waits for the next one; a rare op would keep it queued).
const CALLS = ["get", "create", "start", "stop", "delete", "autodelete", "execute", "upload", "download", "session-exec", "session-create", "list"];
const EFFECTFUL = ["create", "start", "stop", "delete", "autodelete", "execute", "upload", "download", "session-exec"];
const HANGS = ["get", "execute", "download", "upload", "stop", "autodelete", "session-exec"];
/** Armed faults not met yet beyond this: the nemesis waits (every armed one stays for its call). */
const MAX_PENDING = 6;

export function isDaytonaKind(kind: string): kind is DaytonaFaultKind {
  return Object.hasOwn(DAYTONA_WEIGHTS, kind);
}

function specOf(kind: DaytonaFaultKind, rng: Rng): ArmedFault | null {
  switch (kind) {
    case "daytona_5xx":
      return { kind: "status", status: rng.pick([500, 502, 503]), op: rng.pick(CALLS), message: "torture: injected server error" };
    case "daytona_429":
      return { kind: "rate_limit", retryAfterSeconds: 1 + rng.int(3), op: rng.pick(CALLS) };
    case "daytona_lost_reply":
      return { kind: "lost_reply", op: rng.pick(EFFECTFUL) };
    case "daytona_truncate":
      return { kind: "truncate", afterBytes: rng.int(4096), op: "download" };
    case "daytona_never_confirms":
      return { kind: "never_confirms", op: "stop", holdMs: Math.round(rng.between(20_000, 60_000)) };
    case "daytona_hang":
      return { kind: "hang", op: rng.pick(HANGS), holdMs: Math.round(rng.between(2_000, 15_000)) };
    case "daytona_autodelete_ignored":
      return { kind: "ignored", op: "autodelete" };
    default:
      return null;
  }
}

/** One Daytona fault of `kind` (drawn by the nemesis), as a `fault` operation. */
export function daytonaFault(daytona: TortureEmulator, history: History, kind: DaytonaFaultKind, rng: Rng): void {
  const spec = specOf(kind, rng);
  if (spec) {
    if (daytona.emulator.faults.pending().length >= MAX_PENDING) return;
    const op = history.invoke("fault", { kind, spec });
    daytona.arm(spec);
    op.ok();
    return;
  }
  const records = [...daytona.emulator.sandboxes.records.values()];
  // Only what Daytona itself would do: archive a stopped sandbox; auto-delete a stopped or
  // archived one whose auto-delete is enabled (a disabled interval is never acted on).
  const candidates =
    kind === "daytona_archive"
      ? records.filter((r) => r.state === "stopped" && !r.stuck)
      : records.filter((r) => (r.state === "stopped" || r.state === "archived") && r.autoDeleteInterval >= 0 && !r.stuck);
  const op = history.invoke("fault", { kind, candidates: candidates.length });
  if (candidates.length === 0) {
    op.fail({ reason: "no sandbox in a state Daytona would change" });
    return;
  }
  const target = rng.pick(candidates);
  try {
    daytona.behindBack(target, kind === "daytona_archive" ? "archive" : "delete");
    op.ok({ sandboxId: target.id, leaseId: target.labels["copyback.lease"] ?? null });
  } catch (error) {
    op.fail({ message: (error as Error).message });
  }
}
