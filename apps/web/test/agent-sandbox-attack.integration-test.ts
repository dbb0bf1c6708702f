// An agent can no longer act as the trusted local board. The console (the
// real tRPC and attestation route handlers behind a real HTTP server on 127.0.0.1, local mode)
// and an agent command in a real local sandbox of the local provider - under bubblewrap with and
// without `allowNetwork`, and as a plain process group (no bubblewrap) - which tries curl and
// node's fetch against tRPC `issues.updateStatus` and the attestation route, the way a local
// script could before. Every try is refused (401) or cannot reach the console at all (000), and
// nothing changes: the task's status, the hold, the receipt and the activity log stay as they were.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import {
  usableBubblewrap,
  createLocalProvider,
  hostSearchPath,
  type EnvironmentProvider,
  type LeaseHandle,
} from "@copyback/core/providers";
import { mintRunAgentKey } from "@copyback/core/runs";
import { POST as attest } from "~/app/api/issues/[id]/recovery-actions/resume-workspace-finalization/route";
import { POST as finishRun } from "~/app/api/runs/[id]/finish/route";
import { GET as trpcGet, POST as trpcPost } from "~/app/api/trpc/[trpc]/route";
import { CONSOLE_SECRET, buildAuthWorld, configureWebApp, disconnectWebApp, type AuthWorld } from "./auth-fixture";
import { carriesReceipt, createOwnerHold, holdState, type OwnerHold } from "./recovery-fixture";

const testDb = useTestDatabase();
const db = () => testDb.prisma();
let world: AuthWorld;
let server: http.Server;
let consoleUrl = "";
let instanceRoot = "";
const bwrap = await usableBubblewrap(hostSearchPath());

/** Node request -> fetch Request -> the app's own route handlers -> node response. */
async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  const method = req.method ?? "GET";
  const request = new Request(url, { method, headers, ...(method === "GET" || method === "HEAD" ? {} : { body: Buffer.concat(chunks) }) });
  const attestation = /^\/api\/issues\/([^/]+)\/recovery-actions\/resume-workspace-finalization$/.exec(url.pathname);
  const finish = /^\/api\/runs\/([^/]+)\/finish$/.exec(url.pathname);
  let response: Response;
  if (finish && method === "POST") response = await finishRun(request, { params: Promise.resolve({ id: finish[1] as string }) });
  else if (url.pathname.startsWith("/api/trpc/")) response = await (method === "GET" ? trpcGet : trpcPost)(request);
  else if (attestation && method === "POST") response = await attest(request, { params: Promise.resolve({ id: attestation[1] as string }) });
  else response = Response.json({ code: "not_found" }, { status: 404 });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

beforeAll(async () => {
  configureWebApp(testDb.url(), "local");
  world = await buildAuthWorld(db());
  instanceRoot = await realpath(await mkdtemp(path.join(os.tmpdir(), "copyback-attack-")));
  // Where the launcher keeps it: under the instance root, which bubblewrap hides.
  await writeFile(path.join(instanceRoot, "console-secret"), `${CONSOLE_SECRET}\n`, { mode: 0o600 });
  server = http.createServer((req, res) => void serve(req, res).catch((error: unknown) => res.writeHead(500).end(String(error))));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  consoleUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.close();
  await disconnectWebApp();
  if (instanceRoot) await rm(instanceRoot, { recursive: true, force: true });
});

// The attack, as an agent's command: every request a local script could make before, by curl
// and by node's fetch, with the same-origin headers a browser page of the console would send.
const ATTACK = `
curl -s -o /dev/null --max-time 5 -w "curl-health=%{http_code}\n" "$CONSOLE/api/trpc/health.get"
post() { curl -s -o /dev/null --max-time 5 -w "$1=%{http_code}\\n" -X POST "$2" -H 'content-type: application/json' -H "origin: $CONSOLE" -H 'sec-fetch-site: same-origin' -d "$3"; }
post curl-trpc "$CONSOLE/api/trpc/issues.updateStatus" "$TRPC_BODY"
post curl-attest "$CONSOLE/api/issues/$ISSUE_ID/recovery-actions/resume-workspace-finalization" "$ATTEST_BODY"
node -e '
const h = { "content-type": "application/json", origin: process.env.CONSOLE, "sec-fetch-site": "same-origin" };
const go = (name, url, body) => fetch(url, { method: "POST", headers: h, body, signal: AbortSignal.timeout(5000) })
  .then((r) => console.log(name + "=" + r.status), () => console.log(name + "=000"));
go("fetch-trpc", process.env.CONSOLE + "/api/trpc/issues.updateStatus", process.env.TRPC_BODY)
  .then(() => go("fetch-attest", process.env.CONSOLE + "/api/issues/" + process.env.ISSUE_ID + "/recovery-actions/resume-workspace-finalization", process.env.ATTEST_BODY));
'
if cat "$SECRET_FILE" >/dev/null 2>&1; then echo secret=readable; else echo secret=hidden; fi
`;

interface Attempt {
  codes: Record<string, string>;
}

async function attackFrom(provider: EnvironmentProvider, allowNetwork: boolean, hold: OwnerHold, victim: { id: string; statusVersion: number }): Promise<Attempt> {
  const leaseId = randomUUID();
  const allocation = await provider.acquire!({
    companyId: world.companyA.id,
    environmentId: world.a.environment.id,
    leaseId,
    runId: hold.runId,
    config: { allowNetwork },
  });
  const handle: LeaseHandle = { leaseId, pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
  let output = "";
  try {
    const result = await provider.exec!(handle, {
      argv: ["/bin/sh", "-c", ATTACK],
      env: {
        CONSOLE: consoleUrl,
        ISSUE_ID: hold.issueId,
        SECRET_FILE: path.join(instanceRoot, "console-secret"),
        TRPC_BODY: JSON.stringify({ json: { companyId: world.companyA.id, issueId: victim.id, status: "done", expectedStatusVersion: victim.statusVersion } }),
        ATTEST_BODY: JSON.stringify({
          actionId: hold.actionId,
          runId: hold.runId,
          ownerToken: hold.receipt.token,
          controllerAndCopybackStopped: true,
          stopEvidence: "an agent says so",
        }),
      },
      timeoutMs: 30_000,
      onOutput: (stream, chunk) => {
        if (stream === "stdout") output += chunk;
      },
    });
    expect(result.exitCode, output).toBe(0);
  } finally {
    await provider.destroy!(handle);
  }
  const codes: Record<string, string> = {};
  for (const line of output.split("\n")) {
    const [name, value] = line.split("=");
    if (name && value !== undefined) codes[name] = value;
  }
  return { codes };
}

const REFUSED = ["401", "000"];

describe.each([
  { name: "under bubblewrap without network", isolation: "bubblewrap" as const, allowNetwork: false, expectUnreachable: true },
  { name: "under bubblewrap with allowNetwork", isolation: "bubblewrap" as const, allowNetwork: true, expectUnreachable: false },
  { name: "as a plain process group (no bubblewrap)", isolation: "none" as const, allowNetwork: true, expectUnreachable: false },
])("an agent $name", ({ isolation, allowNetwork, expectUnreachable }) => {
  it.skipIf(isolation === "bubblewrap" && !bwrap)(
    "cannot act as the local board: curl and fetch to tRPC issues.updateStatus and to the attestation route are refused or unreachable, and nothing changes",
    async () => {
      const provider = createLocalProvider({ instanceRoot, isolation, pluginId: `test.attack-${isolation}`, killGraceMs: 500 });
      const hold = await createOwnerHold(db(), { companyId: world.companyA.id, agentId: world.a.agent.id, environmentId: world.a.environment.id });
      const victim = await db().issue.findUniqueOrThrow({ where: { id: world.a.issue.id }, select: { id: true, status: true, statusVersion: true } });
      const before = await holdState(db(), hold);
      const activityBefore = await db().activityLog.count({ where: { companyId: world.companyA.id } });

      const { codes } = await attackFrom(provider, allowNetwork, hold, victim);

      for (const name of ["curl-trpc", "curl-attest", "fetch-trpc", "fetch-attest"]) {
        expect(REFUSED, `${name} answered ${codes[name]}`).toContain(codes[name]);
        if (expectUnreachable) expect(codes[name], name).toBe("000");
        else expect(codes[name], name).toBe("401");
      }
      // The console itself is reachable exactly when the sandbox has network (public health: 200).
      expect(codes["curl-health"]).toBe(expectUnreachable ? "000" : "200");
      // Bubblewrap hides the instance root, the console secret included. (Without bubblewrap the
      // agent runs as the console's own user and could read it: README, "Signing in".)
      if (isolation === "bubblewrap") expect(codes.secret).toBe("hidden");

      expect(await db().issue.findUniqueOrThrow({ where: { id: victim.id }, select: { id: true, status: true, statusVersion: true } })).toEqual(victim);
      expect(await holdState(db(), hold)).toEqual(before);
      expect(await carriesReceipt(db(), hold.runId)).toBe(true);
      expect(await db().activityLog.count({ where: { companyId: world.companyA.id } })).toBe(activityBefore);
    },
    60_000,
  );
});

// The finish API from a sandbox (README "Agent runs"): with network the agent finishes its run
// with its run-scoped key; an isolated sandbox cannot reach the console at all and hands in its
// result through COPYBACK_RESULT_FILE instead.
describe.each([
  { name: "under bubblewrap with allowNetwork", isolation: "bubblewrap" as const, allowNetwork: true, expected: "200" },
  { name: "under bubblewrap without network", isolation: "bubblewrap" as const, allowNetwork: false, expected: "000" },
  { name: "as a plain process group", isolation: "none" as const, allowNetwork: true, expected: "200" },
])("an agent $name with its run-scoped key", ({ isolation, allowNetwork, expected }) => {
  it.skipIf(isolation === "bubblewrap" && !bwrap)(`finishes its own running run through the finish API (${expected === "200" ? "200 accepted" : "unreachable: the result file is its path"})`, async () => {
    const n = 70_000 + Math.floor(Math.random() * 10_000);
    const issue = await db().issue.create({ data: { companyId: world.companyA.id, number: n, identifier: `ACME-${n}`, title: `Finish ${n}`, status: "in_progress" } });
    const run = await db().heartbeatRun.create({
      data: { companyId: world.companyA.id, agentId: world.a.agent.id, nativeIssueId: issue.id, status: "running", runtimeMode: "native", startedAt: new Date() },
    });
    await db().nativeRunFinalization.create({ data: { companyId: world.companyA.id, runId: run.id, issueId: issue.id, phase: "observed" } });
    const key = await mintRunAgentKey(db(), { companyId: world.companyA.id, agentId: world.a.agent.id, runId: run.id });
    const provider = createLocalProvider({ instanceRoot, isolation, pluginId: `test.finish-${isolation}`, killGraceMs: 500 });
    const leaseId = randomUUID();
    const allocation = await provider.acquire!({ companyId: world.companyA.id, environmentId: world.a.environment.id, leaseId, runId: run.id, config: { allowNetwork } });
    const handle: LeaseHandle = { leaseId, pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
    let output = "";
    try {
      await provider.exec!(handle, {
        argv: [
          "/bin/sh",
          "-c",
          `curl -s -o /dev/null --max-time 5 -w 'finish=%{http_code}\n' -X POST "$COPYBACK_API_URL/api/runs/$COPYBACK_RUN_ID/finish" -H "authorization: Bearer $COPYBACK_API_KEY" -H 'content-type: application/json' -d '{"dedupeKey":"turn-1","result":{"schema":"copyback.run-result.v1","outcome":"in_review","summary":"from the sandbox"}}'`,
        ],
        env: { COPYBACK_API_URL: consoleUrl, COPYBACK_RUN_ID: run.id, COPYBACK_API_KEY: key.secret },
        timeoutMs: 30_000,
        onOutput: (stream, chunk) => {
          if (stream === "stdout") output += chunk;
        },
      });
    } finally {
      await provider.destroy!(handle);
    }
    expect(output.trim()).toBe(`finish=${expected}`);
    expect(await db().nativeRunResult.count({ where: { runId: run.id, schemaStatus: "accepted" } })).toBe(expected === "200" ? 1 : 0);
  }, 60_000);
});
