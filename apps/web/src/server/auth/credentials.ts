// Email-and-password credentials as better-auth stores and checks them: an auth_accounts row with
// providerId "credential", accountId = the user's id, and better-auth's own scrypt hash.
// Used by the launcher (demo passwords) and tests; imports nothing of Next.js on purpose.
import { hashPassword } from "better-auth/crypto";
import type { PrismaClient } from "@copyback/db/client";

export const CREDENTIAL_PROVIDER_ID = "credential";

/** Sets (or replaces) a user's password. */
export async function setPassword(prisma: PrismaClient, userId: string, password: string): Promise<void> {
  const hash = await hashPassword(password);
  await prisma.authAccount.upsert({
    where: { providerId_accountId: { providerId: CREDENTIAL_PROVIDER_ID, accountId: userId } },
    update: { password: hash },
    create: { userId, providerId: CREDENTIAL_PROVIDER_ID, accountId: userId, password: hash },
  });
}

/** The password every demo user gets in authenticated mode (README, "Signing in"). */
export const DEMO_PASSWORD = "copyback-demo";

/**
 * Gives the demo password to every user under the reserved `.test` domain (RFC 2606: no real
 * address can be there, so only the demo seed's people match) who has no password yet. A password
 * someone already set is never replaced. Returns the emails that got one.
 */
export async function ensureDemoPasswords(prisma: PrismaClient, password: string = DEMO_PASSWORD): Promise<string[]> {
  const users = await prisma.user.findMany({
    where: { email: { endsWith: ".test" }, accounts: { none: { providerId: CREDENTIAL_PROVIDER_ID } } },
    select: { id: true, email: true },
    orderBy: { email: "asc" },
  });
  // scrypt runs on libuv's thread pool: hashing side by side is several times faster.
  await Promise.all(users.map((user) => setPassword(prisma, user.id, password)));
  return users.map((u) => u.email);
}
