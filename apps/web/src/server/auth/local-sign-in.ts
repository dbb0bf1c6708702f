// GET /api/local-sign-in?token=<console secret>: the launcher's printed link. A right token on a
// loopback Host sets the console cookie and sends the browser to the console; anything else is
// refused and sets nothing. The token is never logged or echoed, and the answer is never cached
// nor sent on as a Referer.
import { hostnameOfHostHeader, isLoopbackHost } from "@copyback/core/deployment";
import { env } from "~/env";
import { jsonError } from "~/server/rest/responses";
import { consoleSetCookie, isConsoleSecret } from "./local-console";

const PRIVATE = { "cache-control": "no-store", "referrer-policy": "no-referrer" } as const;

export function handleLocalSignIn(req: Request): Response {
  const config = env();
  if (config.COPYBACK_DEPLOYMENT_MODE !== "local") {
    return jsonError(404, { code: "sign_in_disabled", message: "The console sign-in link is used in local mode only; sign in at /sign-in." }, PRIVATE);
  }
  const token = new URL(req.url).searchParams.get("token");
  if (!isConsoleSecret(token, config.COPYBACK_CONSOLE_SECRET)) {
    return jsonError(
      401,
      { code: "invalid_sign_in_link", message: "This sign-in link is not valid for this Copyback instance. Use the link `npm start` printed (it changes when the instance's console secret is rotated)." },
      PRIVATE,
    );
  }
  // DNS rebinding: even with the right token, a page of another name gets no cookie
  // (the cookie would be its own name's anyway; it is refused so that nothing depends on that).
  const host = req.headers.get("host");
  if (host !== null && !isLoopbackHost(hostnameOfHostHeader(host))) {
    return jsonError(403, { code: "forbidden", message: "Open the sign-in link on this machine's loopback address." }, PRIVATE);
  }
  const secret = config.COPYBACK_CONSOLE_SECRET as string;
  return new Response(null, { status: 303, headers: { ...PRIVATE, location: "/", "set-cookie": consoleSetCookie(secret) } });
}
