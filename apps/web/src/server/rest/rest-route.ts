// The REST operator API's one wrapper. Every route goes through the same steps,
// in an order that leaks nothing to callers who may not know:
//   1. principal from the bearer key or the session cookie (bad key: 401 invalid_api_key;
//      nobody: 401 unauthenticated)
//   2. state changes with ambient credentials must be same-site (403 cross_site_request)
//   3. the path's resource and its company (missing: 404)
//   4. authorize(principal, permission, company) - the same decision tRPC procedures make
//      (no standing in the company: 404, as if missing; lacking the permission: 403)
//      (a route's `agentAccess` decides instead for agents of the resource's company: no: 404)
//   5. route-specific resource checks (e.g. an agent finishing only its own run: 403)
//   6. the JSON body against the route's zod schema (422 invalid_request with issues; 400 where
//      the route's 422 means something else)
//   7. the handler; DomainErrors it throws map through HTTP_STATUS (401/403/404/409/422/503)
import "server-only";
import type { z } from "zod";
import type { PrismaClient } from "@copyback/db/client";
import { authorize, type Permission, type Principal } from "@copyback/core/auth";
import { DomainError, isDomainError } from "@copyback/core/errors";
import { db } from "~/server/db";
import { consoleOrigin } from "~/server/auth/app-origin";
import { assertSameSiteMutation } from "~/server/auth/csrf";
import { resolvePrincipal } from "~/server/auth/resolve-principal";
import { domainErrorResponse, jsonError } from "./responses";
import type { LoadedResource, ResourceLoader } from "./resources";

export type RestMethod = "GET" | "POST";

/** What Next.js passes a route handler as its second argument. */
export interface RouteContext {
  params: Promise<Record<string, string | string[] | undefined>>;
}

export interface RestHandlerArgs<R extends LoadedResource, I> {
  req: Request;
  db: PrismaClient;
  principal: Principal;
  companyId: string;
  resource: R;
  input: I;
  params: Readonly<Record<string, string>>;
}

export interface RestRouteSpec<R extends LoadedResource, S extends z.ZodType | undefined> {
  method: RestMethod;
  /** Path pattern with `:name` parameters, as documented (e.g. `/api/runs/:id/finish`). */
  path: string;
  permission: Permission;
  resource: ResourceLoader<R>;
  /** Schema of the JSON body; routes without one ignore the body. */
  input?: S;
  /**
   * Status of a body that is not valid JSON or fails `input` (default 422). A route whose 422
   * already means something else (finish: a stored, rejected result) answers 400 instead.
   */
  invalidBodyStatus?: 400 | 422;
  /**
   * Agents that may use the route without holding `permission` (e.g. a run's own agent reading its
   * task's attachments, R-RC-5): asked instead of `authorize` for agent principals of the
   * resource's company. False reads as not found, as if the resource were missing.
   */
  agentAccess?: (db: PrismaClient, agent: Extract<Principal, { kind: "agent" }>, resource: R) => Promise<boolean>;
  /** A further check on the loaded resource after `authorize` allowed the permission. */
  authorizeResource?: (principal: Principal, resource: R) => DomainError | null;
  handler: (args: RestHandlerArgs<R, S extends z.ZodType ? z.output<S> : undefined>) => Promise<unknown>;
}

export interface RestRoute {
  method: RestMethod;
  path: string;
  permission: Permission;
  /** The Next.js route handler (export it as GET/POST from the route.ts of `path`). */
  handle: (req: Request, context: RouteContext) => Promise<Response>;
}

export function restRoute<R extends LoadedResource, S extends z.ZodType | undefined = undefined>(spec: RestRouteSpec<R, S>): RestRoute {
  const handle = async (req: Request, context: RouteContext): Promise<Response> => {
    try {
      const principal = await resolvePrincipal(req.headers);
      if (principal.kind === "anonymous") {
        return jsonError(401, { code: "unauthenticated", message: "Sign in, or send Authorization: Bearer <API key>." }, { "www-authenticate": "Bearer" });
      }
      if (spec.method !== "GET") assertSameSiteMutation(principal, req.headers, () => consoleOrigin(req.headers));

      const params = singleValued(await context.params);
      const prisma = db();
      const resource = await spec.resource(prisma, params);
      if (!resource) return jsonError(404, { code: "not_found", message: "Not found." });

      if (principal.kind === "agent" && spec.agentAccess) {
        if (principal.companyId !== resource.companyId || !(await spec.agentAccess(prisma, principal, resource))) {
          return jsonError(404, { code: "not_found", message: "Not found." });
        }
      } else {
        const decision = authorize(principal, spec.permission, resource.companyId);
        if (decision.kind === "deny") throw new DomainError(decision.code, decision.code, decision.message);
      }
      const refusal = spec.authorizeResource?.(principal, resource);
      if (refusal) throw refusal;

      let input: unknown = undefined;
      if (spec.input) {
        const body = await readJson(req);
        const invalidStatus = spec.invalidBodyStatus ?? 422;
        if (!body.ok) return jsonError(invalidStatus, { code: "invalid_request", message: "The request body is not valid JSON.", issues: [{ message: body.message }] });
        const parsed = spec.input.safeParse(body.value);
        if (!parsed.success) return jsonError(invalidStatus, { code: "invalid_request", message: "The request body is invalid.", issues: parsed.error.issues });
        input = parsed.data;
      }

      const result = await spec.handler({
        req,
        db: prisma,
        principal,
        companyId: resource.companyId,
        resource,
        input: input as S extends z.ZodType ? z.output<S> : undefined,
        params,
      });
      return result instanceof Response ? result : Response.json(result, { headers: { "cache-control": "no-store" } });
    } catch (error) {
      if (isDomainError(error)) return domainErrorResponse(error);
      // Never a stack trace or internal detail in the response; the server log has it.
      console.error(`REST ${spec.method} ${spec.path} failed`, error);
      return jsonError(500, { code: "internal_error", message: "Something went wrong on the server." });
    }
  };
  return { method: spec.method, path: spec.path, permission: spec.permission, handle };
}

function singleValued(params: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) if (typeof value === "string") out[key] = value;
  return out;
}

/** Bodies larger than this are refused before parsing (the documented bodies are small). */
const MAX_BODY_BYTES = 1_000_000;

async function readJson(req: Request): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
  const text = await req.text();
  if (text.length > MAX_BODY_BYTES) return { ok: false, message: `The body exceeds ${MAX_BODY_BYTES} bytes.` };
  if (text.trim() === "") return { ok: false, message: "The body is empty; send a JSON object." };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : "Malformed JSON." };
  }
}
