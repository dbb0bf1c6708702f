// The emulator's HTTP plumbing: a route table, bearer-key auth, and the per-call faults
// applied around a handler's real answer (so a lost reply has really taken effect).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FaultPlan, FaultSpec } from "./faults";
import { EmulatorError } from "./sandboxes";

export interface RequestContext {
  req: IncomingMessage;
  params: Record<string, string>;
  query: URLSearchParams;
  body: () => Promise<Buffer>;
  json: () => Promise<Record<string, unknown>>;
  fault: FaultSpec | undefined;
}

/** A body sent as it is read (large downloads), with its length known up front. */
export interface StreamedBody {
  length: number;
  chunks: () => AsyncIterable<Buffer>;
}

export interface Reply {
  status: number;
  body?: Buffer | object | string;
  streamed?: StreamedBody;
  headers?: Record<string, string>;
}

export interface Route {
  method: string;
  pattern: RegExp;
  op: string;
  /** The path parameter naming the sandbox, for faults scoped to one sandbox. */
  sandboxParam?: string;
  handle: (ctx: RequestContext) => Promise<Reply>;
}

export function route(method: string, path: string, op: string, handle: Route["handle"]): Route {
  const names: string[] = [];
  const source = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    names.push(name);
    return "([^/]+)";
  });
  const pattern = new RegExp(`^${source}$`);
  Object.defineProperty(pattern, "names", { value: names });
  return { method, pattern, op, sandboxParam: names.find((n) => n.startsWith("sandbox")), handle };
}

export function matchRoute(routes: Route[], method: string, path: string): { route: Route; params: Record<string, string> } | undefined {
  for (const candidate of routes) {
    if (candidate.method !== method) continue;
    const match = candidate.pattern.exec(path);
    if (!match) continue;
    const names = (candidate.pattern as RegExp & { names: string[] }).names;
    const params: Record<string, string> = {};
    names.forEach((name, i) => (params[name] = decodeURIComponent(match[i + 1] ?? "")));
    return { route: candidate, params };
  }
  return undefined;
}

export function errorBody(status: number, message: string, path: string): object {
  return { statusCode: status, message, error: STATUS_TEXT[status] ?? "Error", path, timestamp: new Date().toISOString() };
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  408: "Request Timeout",
  409: "Conflict",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export async function serve(
  routes: Route[],
  faults: FaultPlan,
  apiKey: string,
  prefixLength: number,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://emulator");
  const path = url.pathname.slice(prefixLength) || "/";
  const send = (reply: Reply, truncateAfter?: number) => writeReply(res, reply, truncateAfter);
  if (req.headers.authorization !== `Bearer ${apiKey}`) {
    req.resume();
    return send({ status: 401, body: errorBody(401, "Invalid credentials", url.pathname) });
  }
  const matched = matchRoute(routes, req.method ?? "GET", path);
  if (!matched) {
    req.resume();
    return send({ status: 404, body: errorBody(404, `Cannot ${req.method} ${url.pathname}`, url.pathname) });
  }
  const fault = faults.take(matched.route.op, matched.route.sandboxParam ? matched.params[matched.route.sandboxParam] : undefined);
  let bodyPromise: Promise<Buffer> | undefined;
  const body = () => (bodyPromise ??= readBody(req));
  const ctx: RequestContext = {
    req,
    params: matched.params,
    query: url.searchParams,
    body,
    json: async () => {
      const raw = (await body()).toString("utf8");
      if (raw.length === 0) return {};
      try {
        const parsed: unknown = JSON.parse(raw);
        if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
      } catch {
        // Answered below as Daytona answers malformed JSON.
      }
      throw new EmulatorError(400, "Request body must be a JSON object");
    },
    fault,
  };
  if (fault?.kind === "status") {
    await body();
    return send({ status: fault.status, body: errorBody(fault.status, fault.message ?? "Injected fault", url.pathname) });
  }
  if (fault?.kind === "rate_limit") {
    await body();
    return send({
      status: 429,
      headers: { "retry-after": String(fault.retryAfterSeconds) },
      body: errorBody(429, "ThrottlerException: Too Many Requests", url.pathname),
    });
  }
  if (fault?.kind === "hang") {
    // Held until the test releases it or the client gives up (then nothing happens).
    const closed = new Promise<"closed">((resolve) => res.on("close", () => resolve("closed")));
    if ((await Promise.race([faults.hold(), closed])) === "closed") return;
  }
  let reply: Reply;
  try {
    reply = await matched.route.handle(ctx);
  } catch (error) {
    if (!(error instanceof EmulatorError)) throw error;
    reply = { status: error.status, body: errorBody(error.status, error.message, url.pathname) };
  }
  if (fault?.kind === "lost_reply") {
    res.socket?.destroy();
    return;
  }
  send(reply, fault?.kind === "truncate" ? fault.afterBytes : undefined);
}

function writeReply(res: ServerResponse, reply: Reply, truncateAfter?: number): void {
  if (reply.streamed) {
    void writeStreamed(res, reply, reply.streamed, truncateAfter).catch(() => res.socket?.destroy());
    return;
  }
  const isBuffer = Buffer.isBuffer(reply.body);
  const payload = reply.body === undefined ? Buffer.alloc(0) : isBuffer ? (reply.body as Buffer) : Buffer.from(typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body));
  const headers: Record<string, string> = { "content-length": String(payload.length), ...(reply.headers ?? {}) };
  if (!isBuffer && reply.body !== undefined && typeof reply.body !== "string") headers["content-type"] ??= "application/json; charset=utf-8";
  res.writeHead(reply.status, headers);
  if (truncateAfter !== undefined && truncateAfter < payload.length) {
    // The declared length stays: the client sees a body that ends early, as a dropped transfer does.
    res.write(payload.subarray(0, truncateAfter), () => res.socket?.destroy());
    return;
  }
  res.end(payload);
}

async function writeStreamed(res: ServerResponse, reply: Reply, body: StreamedBody, truncateAfter?: number): Promise<void> {
  res.writeHead(reply.status, { "content-length": String(body.length), ...(reply.headers ?? {}) });
  let sent = 0;
  for await (const chunk of body.chunks()) {
    const room = truncateAfter === undefined ? chunk.length : Math.max(0, truncateAfter - sent);
    const piece = room < chunk.length ? chunk.subarray(0, room) : chunk;
    sent += piece.length;
    // Backpressure: a slow client holds the read, so nothing is buffered whole.
    if (piece.length > 0 && !res.write(piece)) await new Promise((resolve) => res.once("drain", resolve));
    if (truncateAfter !== undefined && sent >= truncateAfter) {
      res.socket?.destroy();
      return;
    }
  }
  res.end();
}
