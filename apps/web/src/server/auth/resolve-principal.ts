// Turns a request into a Principal (DESIGN.md section 5):
//   Authorization: Bearer cbk_...  -> the key's user, restricted to the key's company (both modes)
//   Authorization: Bearer cba_...  -> the key's agent (both modes)
//   local mode, no bearer          -> the trusted local board, if the request carries the console
//                                     cookie (local-console.ts) and was addressed to a loopback
//                                     name (a rebinding page's Host is not); else anonymous: a
//                                     local process (an agent with network) is not the board
//   authenticated mode             -> the session cookie's user, else anonymous
// A bad bearer key throws DomainError invalid_api_key (401); it never degrades to anonymous.
import type { Principal } from "@copyback/core/auth";
import { hostnameOfHostHeader, isLoopbackHost } from "@copyback/core/deployment";
import { env } from "~/env";
import { db } from "~/server/db";
import { bearerTokenOf } from "./api-keys";
import { auth } from "./instance";
import { hasConsoleCookie } from "./local-console";
import { principalFromApiKey } from "./key-principal";
import { principalFromSession } from "./session-principal";

export async function resolvePrincipal(headers: Headers): Promise<Principal> {
  const bearer = bearerTokenOf(headers);
  if (bearer !== undefined) return principalFromApiKey(db(), bearer);
  const config = env();
  if (config.COPYBACK_DEPLOYMENT_MODE === "local") {
    return addressedToLoopback(headers) && hasConsoleCookie(headers, config.COPYBACK_CONSOLE_SECRET) ? { kind: "local_board" } : { kind: "anonymous" };
  }
  return principalFromSession(auth(), db(), headers);
}

/**
 * Local mode binds to loopback only, but a hostile web page can still reach 127.0.0.1 through DNS
 * rebinding (its own name resolving to 127.0.0.1): its requests then carry its own name in Host.
 * Requests without a Host header come from local tools (server components pass the browser's);
 * they still need the console cookie.
 */
function addressedToLoopback(headers: Headers): boolean {
  const host = headers.get("host");
  return host === null || isLoopbackHost(hostnameOfHostHeader(host));
}
