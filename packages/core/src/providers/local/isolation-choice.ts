// Whether a local sandbox runs its agent under bubblewrap: chosen once at acquisition (and
// recorded in the sandbox's identity), then required at every exec of it.
import { DomainError } from "../../errors";
import { usableBubblewrap } from "./bubblewrap";

export type LocalIsolation = "auto" | "bubblewrap" | "none";

const isolationUnavailable = () => new DomainError("unavailable", "provider_isolation_unavailable", "bubblewrap is not available on this host.");

/** At acquisition: "auto" takes bubblewrap when it works here; "bubblewrap" requires it. */
export async function chooseIsolation(isolation: LocalIsolation, searchPath: string): Promise<"bubblewrap" | "none"> {
  if (isolation === "none") return "none";
  const bwrap = await usableBubblewrap(searchPath);
  if (bwrap) return "bubblewrap";
  if (isolation === "bubblewrap") throw isolationUnavailable();
  return "none";
}

/** At exec: the bwrap binary for a sandbox allocated isolated, null for one allocated without. */
export async function bubblewrapFor(mode: "bubblewrap" | "none", searchPath: string): Promise<string | null> {
  if (mode === "none") return null;
  const bwrap = await usableBubblewrap(searchPath);
  // Never run unisolated what was allocated (and shown) as isolated.
  if (!bwrap) throw isolationUnavailable();
  return bwrap;
}
