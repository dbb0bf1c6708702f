// The authorization matrix, authenticated mode: every tRPC procedure (through
// createCaller and through the /api/trpc fetch handler) and every route.ts handler under
// src/app/api, called as every principal, against the permission table. Principals are resolved
// for real from each request: session cookies from real sign-ins, real board and agent keys, a
// revoked key; only R-UI-5's roleless principals, which the database cannot hold, are constructed.
// The local board runs in authorization-matrix-local.integration-test.ts (local mode).
//
// Adding a procedure or a route without an entry in test/matrix/expectations.ts fails here.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ALL_PERMISSIONS, type Permission } from "@copyback/core/auth";
import { useTestDatabase } from "@copyback/db/testing";
import { appRouter } from "~/server/routers/_app";
import { REST_ROUTES } from "~/server/rest/routes";
import { publicProcedure, router } from "~/server/trpc";
import { configureWebApp, disconnectWebApp } from "./auth-fixture";
import { coverageGaps } from "./matrix/coverage";
import { enumerateProcedures, enumerateRoutes } from "./matrix/enumerate";
import {
  DOMAIN_REFUSALS,
  PROCEDURE_ACCESS,
  ROUTE_ACCESS,
  expectedOutcome,
  type Access,
} from "./matrix/expectations";
import { stopLiveFeed } from "./matrix/live-feed";
import { PROCEDURE_CALLS } from "./matrix/procedure-calls";
import {
  AUTHENTICATED_MODE_PRINCIPALS,
  PRINCIPAL_MODELS,
  PRINCIPAL_NAMES,
  type PrincipalName,
} from "./matrix/principals";
import { COVERED_BY_TRPC_MATRIX, ROUTE_CALLS } from "./matrix/route-calls";
import { describeAuthorizationMatrix } from "./matrix/run-matrix";
import { buildMatrixWorld, type MatrixWorld } from "./matrix/world";
import type * as RealResolvePrincipal from "~/server/auth/resolve-principal";

// R-UI-5's principals only (requests carrying the matrix's header); everything else resolves for real.
vi.mock("~/server/auth/resolve-principal", async (importOriginal) => {
  const real = await importOriginal<typeof RealResolvePrincipal>();
  const { resolvePrincipalWithConstructed } = await import("./matrix/constructed-principal");
  return { ...real, resolvePrincipal: resolvePrincipalWithConstructed(real.resolvePrincipal) };
});

const testDb = useTestDatabase();
let world: MatrixWorld;

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildMatrixWorld(testDb.prisma(), "authenticated");
});
afterAll(async () => {
  await stopLiveFeed();
  await disconnectWebApp();
});

const procedures = enumerateProcedures(appRouter);
const routes = await enumerateRoutes();

/** Implemented routes whose allowed request is accepted for later (202), not done at once. */
const ACCEPTED_ROUTES: ReadonlySet<string> = new Set(["POST /api/runs/:id/stop"]);
/** Routes that answer 201: they create a record (R-RC-3: the reconstruction's intent). */
const CREATED_ROUTES: ReadonlySet<string> = new Set(["POST /api/issues/:id/recovery-actions/reconstruct-workspace", "POST /api/issues/:id/attachments"]);

describe("the matrix covers the whole application", () => {
  it("every tRPC procedure has an expectation and a call, and no entry is stale", () => {
    const paths = procedures.map((p) => p.path);
    expect(paths.length).toBeGreaterThan(0);
    expect(coverageGaps(paths, Object.keys(PROCEDURE_ACCESS))).toEqual({ missing: [], stale: [] });
    expect(coverageGaps(paths, Object.keys(PROCEDURE_CALLS))).toEqual({ missing: [], stale: [] });
  });

  it("every route.ts handler has an expectation and a request, and no entry is stale", () => {
    const keys = routes.map((r) => r.key);
    expect(coverageGaps(keys, Object.keys(ROUTE_ACCESS))).toEqual({ missing: [], stale: [] });
    expect(coverageGaps(keys, [...Object.keys(ROUTE_CALLS), ...COVERED_BY_TRPC_MATRIX])).toEqual({
      missing: [],
      stale: [],
    });
  });

  it("fails for a procedure added without an entry, and for an entry whose procedure is gone", () => {
    const extended = router({
      ...appRouter._def.record,
      matrixProbe: { ping: publicProcedure.query(() => "pong") },
    });
    const paths = enumerateProcedures(extended).map((p) => p.path);
    expect(coverageGaps(paths, Object.keys(PROCEDURE_ACCESS))).toEqual({
      missing: ["matrixProbe.ping"],
      stale: [],
    });
    const fewer = paths.filter((p) => p !== "issues.get" && p !== "matrixProbe.ping");
    expect(coverageGaps(fewer, Object.keys(PROCEDURE_ACCESS))).toEqual({
      missing: [],
      stale: ["issues.get"],
    });
  });

  it("REST_ROUTES (the operator API's table) agrees with the route files and with the matrix's table", () => {
    for (const entry of REST_ROUTES) {
      const key = `${entry.method} ${entry.path}`;
      const route = routes.find((r) => r.key === key);
      expect(route, `${key} is in REST_ROUTES but no route.ts exports it`).toBeDefined();
      expect(
        route?.handler,
        `${key}: the route file exports another handler than REST_ROUTES lists`,
      ).toBe(entry.handle);
      const access = ROUTE_ACCESS[key];
      const permission =
        access?.kind === "agent-own-run"
          ? "agent:finish_run"
          : access?.kind === "permission" || access?.kind === "permission-or-task-run-agent"
            ? access.permission
            : null;
      expect(
        permission,
        `${key}: the matrix's table and REST_ROUTES disagree on the permission`,
      ).toBe(entry.permission);
      // POST /api/runs/:id/stop answers 202: the worker executing the run finishes the Stop (R-RC-7).
      expect(
        ROUTE_CALLS[key]?.allowedStatus,
        `${key}: implemented routes answer 200 (202 when accepted for later, 201 when they create a record), stubs 501`,
      ).toBe(entry.implemented ? (ACCEPTED_ROUTES.has(key) ? 202 : CREATED_ROUTES.has(key) ? 201 : 200) : 501);
    }
  });

  it("names domain refusals only for cells that authorization allows", () => {
    for (const [path, byPrincipal] of Object.entries(DOMAIN_REFUSALS)) {
      const access = PROCEDURE_ACCESS[path];
      expect(access, `${path} is not a procedure in the table`).toBeDefined();
      for (const principal of Object.keys(byPrincipal) as PrincipalName[]) {
        expect(
          expectedOutcome(access!, PRINCIPAL_MODELS[principal], "authenticated").kind,
          `${path} as ${principal}`,
        ).toBe("allow");
      }
    }
  });
});

/** Which principals `access` allows, read from the permission table (the local board in local mode). */
function allowedPrincipals(access: Access): PrincipalName[] {
  return PRINCIPAL_NAMES.filter(
    (p) =>
      expectedOutcome(access, PRINCIPAL_MODELS[p], p === "local_board" ? "local" : "authenticated")
        .kind === "allow",
  ).sort();
}

const permission = (p: Permission): Access => ({ kind: "permission", permission: p });

// The spec's own words, pinned: the matrix computes its expectations from the permission table,
// so these keep the table itself from drifting away from the rules.
describe("the permission table says what the spec says", () => {
  it("R-ATT-2: runtime:confirm_owner_stop is held by active owners and administrators (and their keys), the trusted local board and instance administrators; runtime managers and agents are refused", () => {
    const route =
      ROUTE_ACCESS["POST /api/issues/:id/recovery-actions/resume-workspace-finalization"];
    expect(route).toEqual(permission("runtime:confirm_owner_stop"));
    // The tRPC mutation over the same service asks the same permission.
    expect(PROCEDURE_ACCESS["recovery.attestOwnerStop"]).toEqual(route);
    expect(allowedPrincipals(route!)).toEqual([
      "admin",
      "instance_admin",
      "local_board",
      "owner",
      "owner_board_key",
    ]);
  });

  it("R-UI-3: runtime:manage (continue from saved sources, export retries) is held by board operators: owners, administrators, runtime managers, the local board and instance administrators", () => {
    expect(ROUTE_ACCESS["POST /api/issues/:id/recovery-actions/reconstruct-workspace"]).toEqual(
      permission("runtime:manage"),
    );
    expect(allowedPrincipals(permission("runtime:manage"))).toEqual([
      "admin",
      "instance_admin",
      "local_board",
      "owner",
      "owner_board_key",
      "runtime_manager",
    ]);
  });

  it("R-UI-5: missing or unknown role data grants no permission at all", () => {
    for (const p of ALL_PERMISSIONS) {
      for (const principal of ["unknown_role", "missing_role"] as const) {
        expect(
          expectedOutcome(permission(p), PRINCIPAL_MODELS[principal], "authenticated"),
          `${p} as ${principal}`,
        ).toEqual({
          kind: "deny",
          deny: "forbidden",
          domainCode: "forbidden",
        });
      }
    }
  });
});

describeAuthorizationMatrix({
  mode: "authenticated",
  principals: AUTHENTICATED_MODE_PRINCIPALS,
  world: () => world,
  procedures,
  routes,
});
