// Sign-in for authenticated mode: better-auth with its Prisma adapter over our own models
// (users, auth_sessions, auth_accounts, auth_verifications). Email and password only; accounts
// are created by administrators and the launcher, never by self sign-up.
import { betterAuth } from "better-auth/minimal";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { APIError, createAuthMiddleware } from "better-auth/api";
import type { PrismaClient } from "@copyback/db/client";
import { appOrigin } from "./app-origin";
import { SignInLimiter, clientIpOf, type SignInLimits } from "./sign-in-limiter";

export interface AuthConfig {
  prisma: PrismaClient;
  /** Signs session cookies (COPYBACK_AUTH_SECRET / BETTER_AUTH_SECRET). */
  secret: string;
  /** COPYBACK_PUBLIC_URL; unset: each request's own origin. */
  publicUrl: string | undefined;
  signInLimits?: SignInLimits;
  /** Session lifetime in seconds (default 7 days). */
  sessionExpiresInSeconds?: number;
}

/** better-auth's per-IP limiter on the sign-in endpoint: requests per window (seconds). */
const SIGN_IN_PER_IP = { window: 60, max: 20 };

export function createAuth(config: AuthConfig) {
  const limiter = new SignInLimiter(config.signInLimits);
  const secure = config.publicUrl ? new URL(config.publicUrl).protocol === "https:" : false;
  return betterAuth({
    appName: "Copyback",
    secret: config.secret,
    ...(config.publicUrl ? { baseURL: config.publicUrl } : {}),
    basePath: "/api/auth",
    database: prismaAdapter(config.prisma, { provider: "postgresql" }),
    user: { modelName: "user" },
    session: {
      modelName: "authSession",
      expiresIn: config.sessionExpiresInSeconds ?? 7 * 24 * 60 * 60,
      updateAge: 24 * 60 * 60,
    },
    account: { modelName: "authAccount" },
    verification: { modelName: "authVerification" },
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 8 },
    // The console's origin is trusted for better-auth's own Origin check on its POST routes.
    trustedOrigins: (request) => {
      const origin = request ? appOrigin(request.headers, config.publicUrl) : null;
      return origin ? [origin] : [];
    },
    rateLimit: {
      // On in every environment (better-auth's default is production only): tests prove it.
      enabled: true,
      storage: "memory",
      customRules: { "/sign-in/email": SIGN_IN_PER_IP },
    },
    advanced: {
      cookiePrefix: "copyback",
      // Secure exactly when the console is served over https; always httpOnly and SameSite=Lax.
      useSecureCookies: secure,
      defaultCookieAttributes: { httpOnly: true, sameSite: "lax", secure },
      // Explicit: better-auth skips its Origin check under NODE_ENV=test otherwise.
      disableOriginCheck: false,
      disableCSRFCheck: false,
      database: { generateId: "uuid" },
    },
    hooks: {
      before: createAuthMiddleware(async (ctx) => {
        if (ctx.path !== "/sign-in/email") return;
        const email: unknown = (ctx.body as { email?: unknown } | undefined)?.email;
        if (typeof email !== "string" || !ctx.request) return;
        const decision = limiter.attempt(clientIpOf(ctx.request.headers), email);
        if (!decision.allowed) {
          throw new APIError("TOO_MANY_REQUESTS", {
            message: `Too many sign-in attempts. Try again in ${decision.retryAfterSeconds} seconds.`,
            code: "TOO_MANY_SIGN_IN_ATTEMPTS",
          }, { "X-Retry-After": String(decision.retryAfterSeconds) });
        }
      }),
    },
    telemetry: { enabled: false },
  });
}

export type Auth = ReturnType<typeof createAuth>;
