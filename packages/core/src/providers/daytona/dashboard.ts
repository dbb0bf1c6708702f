// Where a person sees a Daytona sandbox in Daytona's own dashboard, from a lease's provider id
// (address.ts). Pure, and nothing secret: the id carries the API URL and the key variable's NAME.
//
// UNCERTAIN (issue 21): Daytona's documentation names the dashboard (https://app.daytona.io/dashboard,
// "Daytona Dashboard") but not a per-sandbox URL; its dashboard's routes (apps/dashboard RoutePath,
// as described publicly) put the sandbox list at /dashboard/sandboxes. So the link goes to that
// list on the API URL's origin (app.daytona.io for Daytona's cloud; the same host for a self-hosted
// API), and the sandbox id is shown beside it to find the row. If Daytona publishes a per-sandbox
// route, this is the one place to change.
import { decodeAddress } from "./address";

export interface DaytonaDashboardLink {
  sandboxId: string;
  /** The dashboard's sandbox list, or null when the API URL is a loopback host (the emulator: no dashboard). */
  url: string | null;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The sandbox id and the dashboard link of a Daytona provider lease id; null when it is not one. */
export function daytonaDashboardLink(providerLeaseId: string | null): DaytonaDashboardLink | null {
  if (providerLeaseId === null) return null;
  let address;
  try {
    address = decodeAddress(providerLeaseId);
  } catch {
    return null;
  }
  const api = new URL(address.apiUrl);
  return { sandboxId: address.sandboxId, url: LOOPBACK.has(api.hostname) ? null : `${api.origin}/dashboard/sandboxes` };
}
