// better-auth's endpoints (sign-in, sign-out, session) under /api/auth/*, authenticated mode only.
import { isDomainError } from "@copyback/core/errors";
import { auth } from "~/server/auth/instance";
import { domainErrorResponse } from "~/server/rest/responses";

export const dynamic = "force-dynamic";

async function handler(req: Request): Promise<Response> {
  try {
    return await auth().handler(req);
  } catch (error) {
    // Local mode: there is no sign-in (404 sign_in_disabled).
    if (isDomainError(error)) return domainErrorResponse(error);
    throw error;
  }
}

export { handler as GET, handler as POST };
