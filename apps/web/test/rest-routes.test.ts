// REST_ROUTES is the list the authorization matrix iterates: it must match the route.ts files
// under src/app/api exactly, both ways, handler for handler.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isPermission } from "@copyback/core/auth";
import { REST_ROUTES } from "~/server/rest/routes";

const apiRoot = path.resolve(import.meta.dirname, "../src/app/api");
// Not operator routes: tRPC's transport, the health probes, better-auth's endpoints, the SSE stream,
// local mode's sign-in link, the Prometheus metrics (their own access rule: src/server/metrics).
const NOT_OPERATOR_ROUTES = new Set(["/api/trpc/:trpc", "/api/health", "/api/livez", "/api/readyz", "/api/auth/:all", "/api/events", "/api/local-sign-in", "/api/metrics"]);
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

function routeFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(full);
    return entry.name === "route.ts" ? [full] : [];
  });
}

function pathPattern(file: string): string {
  const segments = path.relative(apiRoot, path.dirname(file)).split(path.sep).filter(Boolean);
  return `/api/${segments.map((s) => s.replace(/^\[\.\.\.(.+)\]$/, ":$1").replace(/^\[(.+)\]$/, ":$1")).join("/")}`.replace(/\/$/, "");
}

describe("REST_ROUTES", () => {
  it("lists every operator route.ts handler, and nothing that is not one", async () => {
    const found: string[] = [];
    for (const file of routeFiles(apiRoot)) {
      const pattern = pathPattern(file);
      if (NOT_OPERATOR_ROUTES.has(pattern)) continue;
      const mod = (await import(file)) as Record<string, unknown>;
      for (const method of METHODS) {
        if (typeof mod[method] !== "function") continue;
        const entry = REST_ROUTES.find((r) => r.method === method && r.path === pattern);
        expect(entry, `${method} ${pattern} is missing from REST_ROUTES`).toBeDefined();
        expect(mod[method], `${method} ${pattern} exports another handler than REST_ROUTES lists`).toBe(entry?.handle);
        found.push(`${method} ${pattern}`);
      }
    }
    expect(found.sort()).toEqual(REST_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  it("has one entry per method and path, each with a registered permission", () => {
    const keys = REST_ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const route of REST_ROUTES) expect(isPermission(route.permission)).toBe(true);
  });

  it("documents the spec's endpoints with their permissions", () => {
    const table = Object.fromEntries(REST_ROUTES.map((r) => [`${r.method} ${r.path}`, r.permission]));
    expect(table).toEqual({
      "GET /api/issues/:id/recovery-actions": "issues:read",
      "POST /api/issues/:id/recovery-actions/resume-workspace-finalization": "runtime:confirm_owner_stop",
      "POST /api/issues/:id/recovery-actions/retry-workspace-export": "runtime:manage",
      "POST /api/issues/:id/recovery-actions/reconstruct-workspace": "runtime:manage",
      "POST /api/issues/:id/recovery-actions/resolve": "runtime:manage",
      "GET /api/issues/:id/attachments": "issues:read",
      "POST /api/issues/:id/attachments": "issues:write",
      // R-RC-5: and the run-scoped key of a run of the same task (agentAccess).
      "GET /api/issues/:id/attachments/:attachmentId/content": "issues:read",
      "GET /api/environment-leases/:leaseId": "runs:read",
      "GET /api/runs/:id": "runs:read",
      "GET /api/runs/:id/agent-output": "runs:read",
      "POST /api/runs/:id/finish": "agent:finish_run",
      "POST /api/runs/:id/stop": "issues:write",
    });
  });
});
