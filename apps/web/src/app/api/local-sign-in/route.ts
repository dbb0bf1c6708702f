// The local console's sign-in link (server/auth/local-sign-in.ts).
import { handleLocalSignIn } from "~/server/auth/local-sign-in";

export const dynamic = "force-dynamic";

export function GET(req: Request): Response {
  return handleLocalSignIn(req);
}
