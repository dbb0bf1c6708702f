// Two ways the matrix calls a procedure, both resolving the principal for real from the request's
// headers (createContext -> resolvePrincipal):
//   caller: createContext + createCaller, as server components call procedures
//   http:   the /api/trpc fetch handler Next.js serves (GET for queries, POST for mutations)
import { TRPCError } from "@trpc/server";
import superjson from "superjson";
import { DomainError } from "@copyback/core/errors";
import { GET as trpcGET, POST as trpcPOST } from "~/app/api/trpc/[trpc]/route";
import { createCaller } from "~/server/routers/_app";
import { createContext } from "~/server/trpc";
import type { DeploymentMode } from "./expectations";
import type { ProcedureType } from "./enumerate";
import { matrixRequest } from "./http";
import type { Credential } from "./principals";

export type Observed =
  | { ok: true; data: unknown }
  /** `code`: the tRPC error code; `status`: the HTTP status (http transport only). */
  | { ok: false; code: string; domainCode: string | null; message: string; status?: number };

export interface ProcedureInvocation {
  mode: DeploymentMode;
  credential: Credential;
  path: string;
  type: ProcedureType;
  input: unknown;
}

export type TrpcTransport = "caller" | "http";

export function invokeProcedure(
  transport: TrpcTransport,
  call: ProcedureInvocation,
): Promise<Observed> {
  return transport === "caller" ? viaCaller(call) : viaHttp(call);
}

async function viaCaller({
  mode,
  credential,
  path,
  type,
  input,
}: ProcedureInvocation): Promise<Observed> {
  if (type === "subscription")
    throw new Error(`${path}: the matrix has no way to call subscriptions yet; add one`);
  // The same headers the HTTP pass sends; createContext resolves the principal from them.
  const headers = matrixRequest(mode, credential, {
    method: type === "query" ? "GET" : "POST",
    path: "/api/trpc",
  }).headers;
  try {
    const caller = createCaller(await createContext({ headers }));
    let target: unknown = caller;
    for (const segment of path.split(".")) target = (target as Record<string, unknown>)[segment];
    return { ok: true, data: await (target as (input: unknown) => Promise<unknown>)(input) };
  } catch (error) {
    if (error instanceof TRPCError) {
      return {
        ok: false,
        code: error.code,
        domainCode: error.cause instanceof DomainError ? error.cause.code : null,
        message: error.message,
      };
    }
    throw error;
  }
}

interface TrpcErrorEnvelope {
  error: {
    json: {
      message: string;
      data: { code: string; httpStatus: number; domainCode: string | null };
    };
  };
}

async function viaHttp({
  mode,
  credential,
  path,
  type,
  input,
}: ProcedureInvocation): Promise<Observed> {
  if (type === "subscription")
    throw new Error(`${path}: the matrix has no way to call subscriptions yet; add one`);
  const serialized = input === undefined ? undefined : superjson.serialize(input);
  const response =
    type === "query"
      ? await trpcGET(
          matrixRequest(mode, credential, {
            method: "GET",
            path: `/api/trpc/${path}${serialized === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(serialized))}`}`,
          }),
        )
      : await trpcPOST(
          matrixRequest(mode, credential, {
            method: "POST",
            path: `/api/trpc/${path}`,
            ...(serialized === undefined ? {} : { body: serialized }),
          }),
        );
  const body = (await response.json()) as {
    result?: { data: Parameters<typeof superjson.deserialize>[0] };
  } & Partial<TrpcErrorEnvelope>;
  if (response.ok && body.result)
    return { ok: true, data: superjson.deserialize(body.result.data) };
  const error = body.error?.json;
  if (!error)
    throw new Error(`${path}: unexpected ${response.status} response ${JSON.stringify(body)}`);
  if (error.data.httpStatus !== response.status)
    throw new Error(`${path}: body says ${error.data.httpStatus}, response is ${response.status}`);
  return {
    ok: false,
    code: error.data.code,
    domainCode: error.data.domainCode,
    message: error.message,
    status: response.status,
  };
}
