// A Railway GraphQL emulator for the harness and the tenant takeover tests (Railway cannot be reached from here): one
// HTTP endpoint speaking GraphQL over POST like backboard.railway.com/graphql/v2, its schema from
// Railway's public one (schema.ts), deployments whose status a test moves, bearer-token checks
// answered the way Railway answers them (200 with a GraphQL error), and per-request faults:
// a hang (a timeout for the client), GraphQL errors, an HTTP status, a body cut short.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { graphql } from "graphql";
import { railwaySchema, type DeploymentStatus } from "./schema";

export interface EmulatedDeployment {
  id: string;
  status: DeploymentStatus;
  deploymentStopped: boolean;
  projectId: string;
  environmentId: string;
  serviceId: string;
  createdAt: string;
}

export type RailwayFault =
  /** The request is read and never answered (the client's timeout decides). */
  | { kind: "hang" }
  /** HTTP 200 with `errors` and no data, as Railway answers a failed resolver. */
  | { kind: "graphql_error"; message: string }
  /** An HTTP status with an HTML body (a gateway's error page). */
  | { kind: "http_status"; status: number }
  /** The real answer, cut after `bytes` bytes, then the connection is destroyed. */
  | { kind: "truncate"; bytes: number };

export class RailwayEmulator {
  readonly deployments = new Map<string, EmulatedDeployment>();
  /** Faults for the next requests, first in first out. */
  readonly faults: RailwayFault[] = [];
  /** Every request's operation variables, for assertions. */
  readonly requests: { authorization: string | undefined; variables: unknown }[] = [];
  #server: Server | null = null;
  readonly #hung = new Set<ServerResponse>();

  constructor(readonly token: string) {}

  get url(): string {
    const address = this.#server?.address() as AddressInfo | null;
    if (!address) throw new Error("the emulator is not started");
    return `http://127.0.0.1:${address.port}/graphql/v2`;
  }

  async start(): Promise<this> {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.#hung) res.destroy();
    this.#hung.clear();
    await new Promise<void>((resolve) => {
      if (!this.#server) return resolve();
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    this.#server = null;
  }

  addDeployment(deployment: Omit<EmulatedDeployment, "createdAt" | "deploymentStopped"> & { deploymentStopped?: boolean }): EmulatedDeployment {
    const full = { deploymentStopped: false, createdAt: new Date().toISOString(), ...deployment };
    this.deployments.set(full.id, full);
    return full;
  }

  /** Moves a deployment through its lifecycle as Railway would (REMOVED implies stopped unless told otherwise). */
  setStatus(id: string, status: DeploymentStatus, deploymentStopped: boolean = status === "REMOVED"): void {
    const deployment = this.deployments.get(id);
    if (!deployment) throw new Error(`no emulated deployment ${id}`);
    deployment.status = status;
    deployment.deploymentStopped = deploymentStopped;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    if (req.method !== "POST" || !req.url?.startsWith("/graphql/v2")) return void res.writeHead(404).end();
    let body: { query?: unknown; variables?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
    } catch {
      return this.#json(res, 400, { errors: [{ message: "Invalid JSON body" }] });
    }
    this.requests.push({ authorization: req.headers.authorization, variables: body.variables });
    const fault = this.faults.shift();
    if (fault?.kind === "hang") {
      this.#hung.add(res);
      return;
    }
    if (fault?.kind === "http_status") {
      res.writeHead(fault.status, { "content-type": "text/html" });
      return void res.end("<html><body>upstream error</body></html>");
    }
    if (fault?.kind === "graphql_error") return this.#json(res, 200, { errors: [{ message: fault.message }], data: null });
    if (req.headers.authorization !== `Bearer ${this.token}`) return this.#json(res, 200, { errors: [{ message: "Not Authorized" }], data: null });
    const result = await graphql({
      schema: railwaySchema,
      source: String(body.query ?? ""),
      variableValues: (body.variables ?? {}) as Record<string, unknown>,
      rootValue: {
        deployment: ({ id }: { id: string }) => {
          const found = this.deployments.get(id);
          if (!found) throw new Error("Deployment not found");
          return { ...found, canRedeploy: false, canRollback: false, staticUrl: null, url: null };
        },
      },
    });
    const text = JSON.stringify(result);
    if (fault?.kind === "truncate") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(text.slice(0, fault.bytes));
      // Flushed, then the connection is cut: the client sees a body that ends early.
      setTimeout(() => res.destroy(), 20);
      return;
    }
    this.#json(res, 200, result);
  }

  #json(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  }
}
