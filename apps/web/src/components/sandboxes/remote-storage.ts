// R-DT-3 on the Retained sandboxes page (pure, unit-tested): a sandbox kept by a remote provider
// (Daytona) is stopped but not free. No lease-age sweep deletes a released, confirmed-stopped
// allocation, so its disk stays in the provider's account, billed, until someone repairs or
// discards it; the page says so beside the size. A local sandbox keeps the worker's own disk.
const REMOTE: Record<string, string> = { daytona: "Daytona" };

/** The storage note for a retained sandbox, or null for a provider that keeps no remote storage. */
export function remoteStorageNote(provider: string, size: { bytes: number } | null, formatted: string): string | null {
  const name = REMOTE[provider];
  if (name === undefined) return null;
  const held = size === null ? "its disk" : formatted;
  return `Kept in ${name} with its files (${held}): storage costs continue while repair waits. No sweep deletes it by age (R-DT-3); discard it once the files are no longer needed.`;
}

/** The Daytona sandbox id inside a provider lease id (`daytona:<id>?...`), for the row; null otherwise. */
export function remoteSandboxId(providerLeaseId: string | null): string | null {
  return /^daytona:([^?]+)\?/.exec(providerLeaseId ?? "")?.[1] ?? null;
}
