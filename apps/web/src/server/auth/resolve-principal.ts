// Turns a request into a Principal: local mode trusts the local board operator; authenticated
// mode reads the session cookie or a bearer API key (added by the console issue's auth work).
import type { Principal } from "@copyback/core/auth";
import { env } from "~/env";

export async function resolvePrincipal(_headers: Headers): Promise<Principal> {
  if (env().COPYBACK_DEPLOYMENT_MODE === "local") return { kind: "local_board" };
  return { kind: "anonymous" };
}
