// What the matrix must cover, read from the application itself rather than from a list someone
// keeps: the procedures from the router's own record, the routes from the route.ts files Next.js
// serves (with the HTTP methods each module really exports).
import fs from "node:fs";
import path from "node:path";
import type { AnyRouter } from "@trpc/server";

export type ProcedureType = "query" | "mutation" | "subscription";

export interface EnumeratedProcedure {
  path: string;
  type: ProcedureType;
}

interface ProcedureLike {
  _def: { procedure: true; type: ProcedureType };
}

function isProcedure(value: unknown): value is ProcedureLike {
  const def = (value as { _def?: { procedure?: unknown } } | null)?._def;
  return typeof value === "function" && def?.procedure === true;
}

/** Every procedure of `router`, walking its nested record (lazy routers are refused: load them first). */
export function enumerateProcedures(router: AnyRouter): EnumeratedProcedure[] {
  if (Object.keys(router._def.lazy).length > 0)
    throw new Error("The matrix cannot see into lazy routers; enumerate them after loading.");
  const out: EnumeratedProcedure[] = [];
  const walk = (record: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(record)) {
      const name = prefix ? `${prefix}.${key}` : key;
      if (isProcedure(value)) out.push({ path: name, type: value._def.type });
      else if (value && typeof value === "object") walk(value as Record<string, unknown>, name);
    }
  };
  walk(router._def.record as Record<string, unknown>, "");
  // Cross-check with tRPC's own flat map, which is what the HTTP adapter dispatches on.
  const flat = Object.keys(router._def.procedures as Record<string, unknown>).sort();
  const walked = out.map((p) => p.path).sort();
  if (JSON.stringify(flat) !== JSON.stringify(walked))
    throw new Error(
      `router record and procedure map disagree: ${walked.join(",")} vs ${flat.join(",")}`,
    );
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

export const API_ROOT = path.resolve(import.meta.dirname, "../../src/app/api");

/** HTTP methods Next.js route handlers may export. */
export const ROUTE_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

export type RouteHandler = (
  req: Request,
  context: { params: Promise<Record<string, string | string[]>> },
) => Promise<Response>;

export interface EnumeratedRoute {
  /** "METHOD /api/path/:param" */
  key: string;
  method: RouteMethod;
  /** The path pattern with `:name` for `[name]` and `[...name]` segments. */
  path: string;
  file: string;
  handler: RouteHandler;
}

function routeFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return routeFiles(full);
      return /^route\.(ts|tsx|js|mjs)$/.test(entry.name) ? [full] : [];
    })
    .sort();
}

/** `src/app/api/runs/[id]/finish/route.ts` -> `/api/runs/:id/finish` (route groups `(x)` vanish). */
export function pathPatternOf(file: string): string {
  const segments = path
    .relative(API_ROOT, path.dirname(file))
    .split(path.sep)
    .filter((s) => s !== "" && !/^\(.+\)$/.test(s))
    .map((s) => s.replace(/^\[\[?\.\.\.(.+?)\]?\]$/, ":$1").replace(/^\[(.+)\]$/, ":$1"));
  return ["/api", ...segments].join("/");
}

/** Every exported HTTP method of every route.ts under src/app/api, by importing the modules. */
export async function enumerateRoutes(): Promise<EnumeratedRoute[]> {
  const out: EnumeratedRoute[] = [];
  for (const file of routeFiles(API_ROOT)) {
    const mod = (await import(file)) as Record<string, unknown>;
    const pattern = pathPatternOf(file);
    for (const method of ROUTE_METHODS) {
      const handler = mod[method];
      if (typeof handler === "function")
        out.push({
          key: `${method} ${pattern}`,
          method,
          path: pattern,
          file,
          handler: handler as RouteHandler,
        });
    }
  }
  return out.sort((a, b) => a.key.localeCompare(b.key));
}
