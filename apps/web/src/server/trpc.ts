// tRPC wiring in one place (DESIGN.md section 7): context, transformer, error formatter, and the
// base procedures. Routers are plain objects merged in routers/_app.ts, one procedure per file.
import { initTRPC } from "@trpc/server";
import superjson from "superjson";
import { ZodError, z } from "zod";
import type { PrismaClient } from "@copyback/db";
import { db } from "./db";

export interface Context {
  db: PrismaClient;
  headers: Headers;
}

export function createContext(opts: { headers: Headers }): Context {
  return { db: db(), headers: opts.headers };
}

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    return {
      ...shape,
      data: {
        ...shape.data,
        // Field-level validation details for forms; null when the error is not a validation error.
        zodError: error.cause instanceof ZodError ? z.flattenError(error.cause) : null,
      },
    };
  },
});

export const createCallerFactory = t.createCallerFactory;
export const router = t.router;
export const publicProcedure = t.procedure;
