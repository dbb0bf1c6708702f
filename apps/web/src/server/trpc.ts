// tRPC wiring in one place (DESIGN.md section 7): context, transformer, error formatter, and the
// procedure factories. Routers are plain objects merged in routers/_app.ts, one procedure per file.
import { TRPCError, initTRPC } from "@trpc/server";
import superjson from "superjson";
import { ZodError, z } from "zod";
import type { PrismaClient } from "@copyback/db/client";
import { authorize, type Permission, type Principal } from "@copyback/core/auth";
import { DomainError } from "@copyback/core/errors";
import { db } from "./db";
import { domainCodeOf, toTRPCError } from "./errors";
import { consoleOrigin } from "./auth/app-origin";
import { assertSameSiteMutation } from "./auth/csrf";
import { resolvePrincipal } from "./auth/resolve-principal";

export interface Context {
  db: PrismaClient;
  headers: Headers;
  principal: Principal;
  /**
   * Lookups the read procedures of one request share (one context = one request: a page's server
   * caller, or one HTTP call). An issue page asks four procedures that each check the issue is
   * the company's; with this the check is one query. Never used by mutations.
   */
  requestReads?: Map<string, Promise<unknown>>;
}

export async function createContext(opts: { headers: Headers }): Promise<Context> {
  try {
    return { db: db(), headers: opts.headers, principal: await resolvePrincipal(opts.headers), requestReads: new Map() };
  } catch (error) {
    // A revoked or unknown bearer key: 401 invalid_api_key, not an internal error.
    if (error instanceof DomainError) throw toTRPCError(error);
    throw error;
  }
}

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    return {
      ...shape,
      data: {
        ...shape.data,
        // The stable domain code (e.g. "not_found", "merge_conflict") clients match on.
        domainCode: domainCodeOf(error),
        // Field-level validation details for forms; null when the error is not a validation error.
        zodError: error.cause instanceof ZodError ? z.flattenError(error.cause) : null,
      },
    };
  },
});

export const createCallerFactory = t.createCallerFactory;
export const router = t.router;

/** Maps typed domain errors thrown anywhere below to tRPC errors, in one middleware. */
const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof DomainError) {
    throw toTRPCError(result.error.cause);
  }
  return result;
});

/** Mutations made with ambient credentials (session cookie, local mode) must come from the console's own origin. */
const sameSiteMutations = t.middleware(({ ctx, type, next }) => {
  if (type === "mutation") assertSameSiteMutation(ctx.principal, ctx.headers, () => consoleOrigin(ctx.headers));
  return next();
});

export const publicProcedure = t.procedure.use(domainErrors).use(sameSiteMutations);

const companyInput = z.object({ companyId: z.uuid() });

/**
 * A procedure scoped to one company that requires one permission. The input always carries
 * `companyId`; the handler's context is narrowed to the authorized company.
 */
export function companyProcedure(permission: Permission) {
  return publicProcedure
    .input(companyInput)
    .use(({ ctx, input, next }) => {
      const decision = authorize(ctx.principal, permission, input.companyId);
      if (decision.kind === "deny") throw toTRPCError(new DomainError(decision.code, decision.code, decision.message));
      return next({ ctx: { ...ctx, companyId: input.companyId, permission } });
    });
}

/** A procedure that needs any signed-in principal (company lists, the current user). */
export const authenticatedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (ctx.principal.kind === "anonymous") throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in to continue." });
  // A run-scoped agent key is good for its run's finish call (REST) and nothing else.
  if (ctx.principal.kind === "agent" && ctx.principal.runId !== undefined) throw new TRPCError({ code: "FORBIDDEN", message: "A run-scoped agent key can only finish its own run." });
  return next({ ctx: { ...ctx, principal: ctx.principal } });
});
