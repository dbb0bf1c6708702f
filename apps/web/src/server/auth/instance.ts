import "server-only";
import { DomainError } from "@copyback/core/errors";
import type { PrismaClient } from "@copyback/db/client";
import { env, type WebEnv } from "~/env";
import { db } from "~/server/db";
import { createAuth, type Auth } from "./better-auth";

// One better-auth instance per server process, on the shared Prisma client; kept on globalThis so
// dev-mode reloads do not build a second one (and a second rate-limit memory). It is built anew
// only when what it was built from changes: the parsed configuration (env() is one object per
// distinct environment) or the Prisma client (tests point the app at their own database).
const holder = globalThis as unknown as {
  copybackAuth?: { auth: Auth; config: WebEnv; prisma: PrismaClient };
};

/** The sign-in service; exists only in authenticated mode. */
export function auth(): Auth {
  const config = env();
  if (config.COPYBACK_DEPLOYMENT_MODE !== "authenticated" || !config.authSecret) {
    throw new DomainError("not_found", "sign_in_disabled", "Sign-in is not used in local mode.");
  }
  const prisma = db();
  const built = holder.copybackAuth;
  if (built?.config === config && built.prisma === prisma) return built.auth;
  const fresh = createAuth({
    prisma,
    secret: config.authSecret,
    publicUrl: config.COPYBACK_PUBLIC_URL,
  });
  holder.copybackAuth = { auth: fresh, config, prisma };
  return fresh;
}
