// A Daytona lease's provider id: the sandbox id together with where it lives (API URL, target)
// and the NAME of the variable holding the key. Cleanup and probes get only the lease handle
// (often in a later process, after a restart), and the sandbox must be reached exactly where it
// was created, whatever the environment's config says by then. Nothing secret is in it.
//
//   daytona:<sandboxId>?api=<url-encoded apiUrl>&keyEnv=<NAME>[&target=<target>]
import { DomainError } from "../../errors";
import { daytonaEnvironmentConfig } from "./config";

export interface DaytonaAddress {
  sandboxId: string;
  apiUrl: string;
  apiKeyEnv: string;
  target?: string | undefined;
}

const SANDBOX_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function encodeAddress(address: DaytonaAddress): string {
  const query = new URLSearchParams({ api: address.apiUrl, keyEnv: address.apiKeyEnv });
  if (address.target !== undefined) query.set("target", address.target);
  return `daytona:${address.sandboxId}?${query.toString()}`;
}

/** Pure: the address in a provider lease id, or a typed refusal (never a guess). */
export function decodeAddress(providerLeaseId: string): DaytonaAddress {
  const refuse = () =>
    new DomainError("invalid", "provider_lease_id_invalid", `Not a Daytona provider lease id: ${JSON.stringify(providerLeaseId.slice(0, 200))}.`);
  const match = /^daytona:([^?]+)\?(.*)$/.exec(providerLeaseId);
  if (!match || !SANDBOX_ID.test(match[1] ?? "")) throw refuse();
  const query = new URLSearchParams(match[2]);
  const apiUrl = query.get("api");
  const apiKeyEnv = query.get("keyEnv");
  const target = query.get("target") ?? undefined;
  // The same rules as a stored config: an address can point a key only where a config could.
  const checked = daytonaEnvironmentConfig.safeParse({ apiUrl, apiKeyEnv, ...(target !== undefined ? { target } : {}) });
  if (apiUrl === null || apiKeyEnv === null || !checked.success) throw refuse();
  return { sandboxId: match[1] as string, apiUrl, apiKeyEnv, target };
}
