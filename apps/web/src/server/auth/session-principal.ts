// A better-auth session -> the board user behind it, with memberships and the instance
// administrator flag read fresh from the database on every request, so a role change or a
// suspension applies at once rather than at the next sign-in.
import type { PrismaClient } from "@copyback/db/client";
import type { Principal } from "@copyback/core/auth";
import type { Auth } from "./better-auth";

export async function principalFromSession(auth: Auth, prisma: PrismaClient, headers: Headers): Promise<Principal> {
  // Expired or unknown session tokens yield null (better-auth checks expiry and the signature).
  const session = await auth.api.getSession({ headers });
  if (!session) return { kind: "anonymous" };
  const user = await prisma.user.findUnique({
    where: { id: session.user.id },
    select: { id: true, isInstanceAdmin: true, memberships: { select: { companyId: true, role: true, status: true } } },
  });
  if (!user) return { kind: "anonymous" };
  return { kind: "board_user", userId: user.id, isInstanceAdmin: user.isInstanceAdmin, memberships: user.memberships, via: "session" };
}
