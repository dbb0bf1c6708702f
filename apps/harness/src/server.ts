// The harness's HTTP service (R-RW-5): `POST /v1/tenant/workspace-worker-stop`. The fleet token
// authorizes the request only; the answer is evidence only through the signed receipt. The
// harness resolves the stack's resources from its own configuration and asks Railway itself.
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { firstDuplicateKey, WORKER_STOP_MAX_REQUEST_BYTES, WORKER_STOP_PATH, workerStopRequest, type HarnessRefusalCode, type WorkerStopRequest, type WorkerStopResponse } from "@copyback/core/platforms";
import { decideBeforeRead, decidePlatformMatch, decideStop, type StopDecision } from "./decide-stop";
import type { StackResources } from "./env";
import { decideCgroupPlace, decideCgroupStop, readWorkerCgroup } from "./worker-cgroup-check";
import { readDeployment, type RailwayClientOptions } from "./railway-client";
import { signStopReceipt, type Signer } from "./sign-receipt";

export interface HarnessDeps {
  fleetToken: string;
  stacks: Readonly<Record<string, StackResources>>;
  /** Absent when every stack is a worker-cgroup stack. */
  railway?: RailwayClientOptions;
  /** Issue 22 part 5: this host's boot id (worker-cgroup stacks). */
  bootId?: () => Promise<string | null>;
  signer: Signer;
  now?: () => Date;
  log?: (entry: Record<string, unknown>) => void;
}

const STATUS_OF: Record<HarnessRefusalCode, number> = {
  unauthorized: 401,
  invalid_request: 400,
  unknown_stack: 403,
  deployment_not_owned: 403,
  deployment_missing: 409,
  deployment_live: 409,
  evidence_truncated: 502,
  evidence_unavailable: 503,
};

export function createHarnessServer(deps: HarnessDeps): Server {
  const expected = digest(deps.fleetToken);
  return createServer((req, res) => {
    handle(deps, expected, req, res).catch((error: unknown) => {
      deps.log?.({ level: "error", msg: "request failed", error: (error as Error).message });
      if (!res.headersSent) send(res, 503, { outcome: "refused", code: "evidence_unavailable", message: "The harness failed while answering." });
      else res.destroy();
    });
  });
}

async function handle(deps: HarnessDeps, expectedToken: Buffer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? "/", "http://harness").pathname;
  if (req.method === "GET" && path === "/healthz") return sendJson(res, 200, { ok: true });
  if (path !== WORKER_STOP_PATH) return sendJson(res, 404, { error: "not_found" });
  if (req.method !== "POST") return sendJson(res, 405, { error: "method_not_allowed" });

  const refused = (code: HarnessRefusalCode, message: string, extra: { status?: string; http?: number } = {}) => {
    deps.log?.({ level: "info", msg: "refused", code, ...(extra.status ? { status: extra.status } : {}) });
    send(res, extra.http ?? STATUS_OF[code], { outcome: "refused", code, message, ...(extra.status ? { status: extra.status } : {}) });
  };

  // The token authorizes the read; a wrong one learns nothing, not even whether the stack exists.
  const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
  if (!auth || !timingSafeEqual(digest(auth[1]!), expectedToken)) {
    req.resume();
    return refused("unauthorized", "A valid fleet token is required.");
  }
  const body = await readBody(req);
  if (body === null) return refused("invalid_request", `The request body is over ${WORKER_STOP_MAX_REQUEST_BYTES} bytes.`, { http: 413 });
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return refused("invalid_request", "The request body is not JSON.");
  }
  const duplicate = firstDuplicateKey(body);
  if (duplicate !== null) return refused("invalid_request", `The request repeats "${duplicate}".`);
  const parsed = workerStopRequest.safeParse(json);
  if (!parsed.success) return refused("invalid_request", "The request must name stack, runId, ownerToken and the controller's platform identity.");
  const request = parsed.data;

  const decision = await decide(deps, request);
  if (decision.kind === "refuse") return refused(decision.code, decision.message, decision.status ? { status: decision.status } : {});
  const receipt = await signStopReceipt(deps.signer, request.stack, request, deps.now?.() ?? new Date());
  deps.log?.({ level: "info", msg: "signed", stack: request.stack, runId: request.runId, platform: request.deployment.kind, kid: deps.signer.kid });
  send(res, 200, { outcome: "stopped", receipt });
}

/** What the stack's platform says about the identity: Railway's API, or this host's cgroup. */
async function decide(deps: HarnessDeps, request: WorkerStopRequest): Promise<StopDecision> {
  const stack = deps.stacks[request.stack];
  const mismatch = decidePlatformMatch(request, stack);
  if (mismatch) return mismatch;
  if (request.deployment.kind === "worker_cgroup" && stack && "kind" in stack) {
    const place = decideCgroupPlace(request.deployment, stack, (await deps.bootId?.()) ?? null);
    return place ?? decideCgroupStop(await readWorkerCgroup(stack, request.deployment));
  }
  const early = decideBeforeRead(request, stack);
  if (early) return early;
  if (request.deployment.kind !== "railway" || !stack || "kind" in stack) return { kind: "refuse", code: "deployment_not_owned", message: "The identity named is not of this stack's platform." };
  if (!deps.railway) return { kind: "refuse", code: "evidence_unavailable", message: "The harness has no Railway access configured." };
  return decideStop(request, stack, await readDeployment(deps.railway, request.deployment.deploymentId));
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** The body as text, or null once it exceeds the bound (the rest is not read). */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > WORKER_STOP_MAX_REQUEST_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, status: number, body: WorkerStopResponse): void {
  sendJson(res, status, body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "cache-control": "no-store" });
  res.end(text);
}
