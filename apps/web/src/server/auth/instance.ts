import "server-only";
import { DomainError } from "@copyback/core/errors";
import { env } from "~/env";
import { db } from "~/server/db";
import { createAuth, type Auth } from "./better-auth";

// One better-auth instance per server process, on the shared Prisma client; kept on globalThis so
// dev-mode reloads do not build a second one (and a second rate-limit memory).
const holder = globalThis as unknown as { copybackAuth?: Auth };

/** The sign-in service; exists only in authenticated mode. */
export function auth(): Auth {
  const config = env();
  if (config.COPYBACK_DEPLOYMENT_MODE !== "authenticated" || !config.authSecret) {
    throw new DomainError("not_found", "sign_in_disabled", "Sign-in is not used in local mode.");
  }
  holder.copybackAuth ??= createAuth({ prisma: db(), secret: config.authSecret, publicUrl: config.COPYBACK_PUBLIC_URL });
  return holder.copybackAuth;
}

/** Tests only: drop the instance (and its sign-in rate-limit memory) so the next call builds a fresh one. */
export function resetAuthForTests(): void {
  delete holder.copybackAuth;
}
