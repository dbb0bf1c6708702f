// Generates the matrix's test cases: every enumerated procedure (through both tRPC transports) and
// every enumerated route handler, as every principal of the file's deployment mode, each named
// after its expectation so the reporter shows the matrix.
import { describe, expect, it } from "vitest";
import {
  DOMAIN_REFUSALS,
  HTTP_STATUS_OF,
  PROCEDURE_ACCESS,
  ROUTE_ACCESS,
  TRPC_CODE_OF,
  expectedOutcome,
  ruleIdsOf,
  type Access,
  type DeploymentMode,
  type Expected,
} from "./expectations";
import type { EnumeratedProcedure, EnumeratedRoute } from "./enumerate";
import { matrixRequest } from "./http";
import { PROCEDURE_CALLS } from "./procedure-calls";
import { PRINCIPAL_MODELS, type PrincipalName } from "./principals";
import { COVERED_BY_TRPC_MATRIX, ROUTE_CALLS } from "./route-calls";
import { invokeProcedure, type TrpcTransport } from "./trpc-transports";
import { credentialOf, type CellContext, type MatrixWorld } from "./world";

export interface MatrixRun {
  mode: DeploymentMode;
  principals: readonly PrincipalName[];
  world: () => MatrixWorld;
  procedures: readonly EnumeratedProcedure[];
  routes: readonly EnumeratedRoute[];
}

interface Cell<T> {
  name: string;
  target: T;
  principal: PrincipalName;
  /** null: the table has no entry for the target (the cell fails, naming what to add). */
  expected: Expected | null;
}

function expectationOf(
  access: Access | undefined,
  principal: PrincipalName,
  mode: DeploymentMode,
): Expected | null {
  return access ? expectedOutcome(access, PRINCIPAL_MODELS[principal], mode) : null;
}

function cellName(
  subject: string,
  access: Access | undefined,
  principal: PrincipalName,
  outcome: string,
): string {
  const rules = access ? ruleIdsOf(access, principal) : [];
  return `${rules.length > 0 ? `${rules.join(", ")}: ` : ""}${subject} as ${principal} -> ${outcome}`;
}

function procedureOutcomeLabel(
  path: string,
  principal: PrincipalName,
  expected: Expected | null,
): string {
  if (!expected) return "NO EXPECTATION ENTRY";
  if (expected.kind === "deny") return String(HTTP_STATUS_OF[expected.deny]);
  const refusal = DOMAIN_REFUSALS[path]?.[principal];
  return refusal ? `allowed, then refused by the domain (${refusal.domainCode})` : "allowed";
}

function routeOutcomeLabel(key: string, expected: Expected | null): string {
  if (!expected) return "NO EXPECTATION ENTRY";
  if (expected.kind === "deny") return String(HTTP_STATUS_OF[expected.deny]);
  const status = ROUTE_CALLS[key]?.allowedStatus;
  return status === 501 ? "501 not_implemented (allowed)" : `${status ?? "?"} (allowed)`;
}

const TRANSPORTS: ReadonlyArray<readonly [title: string, transport: TrpcTransport]> = [
  ["tRPC procedures through createCaller(createContext(request headers))", "caller"],
  ["tRPC procedures through the fetch handler (GET/POST /api/trpc/:trpc)", "http"],
];

export function describeAuthorizationMatrix(run: MatrixRun): void {
  const procedureCells = run.procedures.flatMap((procedure) =>
    run.principals.map((principal): Cell<EnumeratedProcedure> => {
      const access = PROCEDURE_ACCESS[procedure.path];
      const expected = expectationOf(access, principal, run.mode);
      const outcome = procedureOutcomeLabel(procedure.path, principal, expected);
      return {
        target: procedure,
        principal,
        expected,
        name: cellName(procedure.path, access, principal, outcome),
      };
    }),
  );
  const routeCells = run.routes
    .filter((route) => !COVERED_BY_TRPC_MATRIX.has(route.key))
    .flatMap((route) =>
      run.principals.map((principal): Cell<EnumeratedRoute> => {
        const access = ROUTE_ACCESS[route.key];
        const expected = expectationOf(access, principal, run.mode);
        const outcome = routeOutcomeLabel(route.key, expected);
        return {
          target: route,
          principal,
          expected,
          name: cellName(route.key, access, principal, outcome),
        };
      }),
    );

  describe.each(TRANSPORTS)("%s", (_title, transport) => {
    it.each(procedureCells.map((cell) => [cell.name, cell] as const))("%s", (_name, cell) =>
      runProcedureCell(run, transport, cell),
    );
  });

  describe("route handlers (src/app/api/**/route.ts)", () => {
    it.each(routeCells.map((cell) => [cell.name, cell] as const))("%s", (_name, cell) =>
      runRouteCell(run, cell),
    );
  });
}

async function runProcedureCell(
  run: MatrixRun,
  transport: TrpcTransport,
  { target, principal, expected }: Cell<EnumeratedProcedure>,
): Promise<void> {
  if (!expected)
    throw new Error(
      `${target.path} has no entry in PROCEDURE_ACCESS (test/matrix/expectations.ts)`,
    );
  const call = PROCEDURE_CALLS[target.path];
  if (!call)
    throw new Error(
      `${target.path} has no call in PROCEDURE_CALLS (test/matrix/procedure-calls.ts)`,
    );
  const world = run.world();
  const prepared = await call.prepare({
    world,
    principal,
    tag: `${transport} ${target.path} ${principal}`,
  });
  const observed = await invokeProcedure(transport, {
    mode: run.mode,
    credential: credentialOf(world, principal),
    path: target.path,
    type: target.type,
    input: prepared.input,
  });
  const refusal = DOMAIN_REFUSALS[target.path]?.[principal];

  if (expected.kind === "allow" && !refusal) {
    expect(observed, `expected ${principal} to be allowed`).toMatchObject({ ok: true });
    if (observed.ok) prepared.checkResult?.(observed.data);
    if (prepared.tookEffect)
      expect(await prepared.tookEffect(), "an allowed call changes its target").toBe(true);
    return;
  }
  if (expected.kind === "allow" && refusal) {
    expect(observed).toMatchObject({
      ok: false,
      code: refusal.code,
      domainCode: refusal.domainCode,
    });
  } else if (expected.kind === "deny") {
    expect(observed, `expected ${principal} to be refused (${expected.deny})`).toMatchObject({
      ok: false,
      code: TRPC_CODE_OF[expected.deny],
      ...(expected.domainCode ? { domainCode: expected.domainCode } : {}),
      ...(transport === "http" ? { status: HTTP_STATUS_OF[expected.deny] } : {}),
    });
  }
  if (prepared.tookEffect)
    expect(await prepared.tookEffect(), "a refused call changes nothing").toBe(false);
}

async function runRouteCell(
  run: MatrixRun,
  { target, principal, expected }: Cell<EnumeratedRoute>,
): Promise<void> {
  if (!expected)
    throw new Error(`${target.key} has no entry in ROUTE_ACCESS (test/matrix/expectations.ts)`);
  const call = ROUTE_CALLS[target.key];
  if (!call)
    throw new Error(`${target.key} has no request in ROUTE_CALLS (test/matrix/route-calls.ts)`);
  const world = run.world();
  const ctx: CellContext = { world, principal, tag: `${target.key} ${principal}` };
  const prepared = await call.prepare(ctx);
  expect(prepared.request.method).toBe(target.method);
  const request = matrixRequest(run.mode, credentialOf(world, principal), prepared.request);
  const response = await target.handler(request, { params: Promise.resolve(prepared.params) });
  try {
    if (expected.kind === "allow") {
      if (response.status !== call.allowedStatus) {
        expect.fail(
          `expected ${principal} to be allowed (${call.allowedStatus}), got ${await peek(response)}`,
        );
      }
      await call.checkAllowed?.(response, ctx);
      if (prepared.tookEffect)
        expect(await prepared.tookEffect(), "an allowed request changes its target").toBe(true);
    } else {
      const body = (await response.json()) as { code?: string };
      expect({ ...body, httpStatus: response.status }).toMatchObject({
        httpStatus: HTTP_STATUS_OF[expected.deny],
        ...(expected.domainCode ? { code: expected.domainCode } : {}),
      });
      if (prepared.tookEffect)
        expect(await prepared.tookEffect(), "a refused request changes nothing").toBe(false);
    }
  } finally {
    await prepared.cleanup?.(response);
  }
}

/** An unexpected response, for the failure message (streams are left alone). */
async function peek(response: Response): Promise<string> {
  if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
    return `${response.status} (event stream)`;
  }
  return `${response.status} ${(await response.text()).slice(0, 300)}`;
}
