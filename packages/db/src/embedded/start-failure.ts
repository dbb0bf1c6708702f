// Turn the server's last log lines, when it exits before it is ready, into one of our error codes.
// The server runs with lc_messages=C, so these English texts are stable.
import type { EmbeddedPostgresErrorCode } from "./errors";

export interface StartFailure {
  code: EmbeddedPostgresErrorCode;
  /** The other postmaster's PID, when the server names one. */
  otherPid?: number;
}

export function classifyStartFailure(log: string): StartFailure {
  const other = /Is another postmaster \(PID (\d+)\) running/.exec(log);
  if (other?.[1]) return { code: "ALREADY_RUNNING", otherPid: Number(other[1]) };
  if (/lock file "postmaster\.pid" already exists/.test(log)) return { code: "ALREADY_RUNNING" };
  if (/could not bind .*Address already in use|could not create any TCP\/IP sockets/s.test(log))
    return { code: "PORT_IN_USE" };
  if (/pre-existing shared memory block .* is still in use/.test(log))
    return { code: "STALE_SERVER_PROCESSES" };
  if (/database files are incompatible with server/.test(log))
    return { code: "INCOMPATIBLE_DATA_DIR" };
  if (/has wrong ownership|has invalid permissions|Permission denied/.test(log))
    return { code: "NOT_ACCESSIBLE" };
  return { code: "START_FAILED" };
}
