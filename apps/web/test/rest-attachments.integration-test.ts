// Task attachments through the REST routes (POST/GET /api/issues/:id/attachments, GET
// .../attachments/:attachmentId/content) on a real PostgreSQL with real files under the console's
// COPYBACK_HOME: what an upload stores, what it refuses (and leaves nothing of), and who may read
// the bytes: the board, and the run-scoped key of a run of the same task (R-RC-5), nobody else.
import { createHash } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import type { ReconstructionIntent } from "@copyback/db/client";
import { reconstructionContext } from "@copyback/core/recovery/reconstruction/authority";
import { mintRunAgentKey } from "@copyback/core/runs/run-agent-key";
import { GET as listRoute, POST as uploadRoute } from "~/app/api/issues/[id]/attachments/route";
import { GET as contentRoute } from "~/app/api/issues/[id]/attachments/[attachmentId]/content/route";
import { contentDisposition } from "~/server/rest/handlers/get-attachment-content";
import { bearer, buildAuthWorld, configureWebApp, disconnectWebApp, insertAgentKey, insertBoardKey, json, PUBLIC_URL, type AuthWorld } from "./auth-fixture";
import { exportHoldInstanceRoot } from "./export-hold-fixture";

const testDb = useTestDatabase();
const db = () => testDb.prisma();
let world: AuthWorld;
let home = "";
let ownerKey = "";
let number = 700;

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  home = await exportHoldInstanceRoot();
  world = await buildAuthWorld(db());
  ownerKey = (await insertBoardKey(db(), world.companyA.id, world.users.owner.id)).secret;
});
afterAll(disconnectWebApp);

async function newIssue() {
  const n = ++number;
  return db().issue.create({ data: { companyId: world.companyA.id, number: n, identifier: `ACME-${n}`, title: `Attach ${n}`, status: "in_progress" } });
}

function upload(issueId: string, secret: string, body: BodyInit, headers: Record<string, string> = {}) {
  const req = new Request(`${PUBLIC_URL}/api/issues/${issueId}/attachments`, {
    method: "POST",
    headers: { host: new URL(PUBLIC_URL).host, "content-type": "text/markdown", "x-file-name": "notes.md", ...bearer(secret), ...headers },
    body,
  });
  return uploadRoute(req, { params: Promise.resolve({ id: issueId }) });
}

function content(issueId: string, attachmentId: string, secret: string) {
  const req = new Request(`${PUBLIC_URL}/api/issues/${issueId}/attachments/${attachmentId}/content`, { headers: { host: new URL(PUBLIC_URL).host, ...bearer(secret) } });
  return contentRoute(req, { params: Promise.resolve({ id: issueId, attachmentId }) });
}

async function storedFiles(): Promise<string[]> {
  return readdir(path.join(home, "attachments", world.companyA.id)).catch(() => []);
}

async function uploaded(issueId: string, text: string, fileName = "notes.md") {
  const response = await upload(issueId, ownerKey, text, { "x-file-name": encodeURIComponent(fileName) });
  expect(response.status).toBe(201);
  return (await json(response)) as { id: string; fileName: string; sizeBytes: number; sha256: string; contentType: string; createdAt: string };
}

describe("uploading", () => {
  it("R-RC-3 an upload answers 201 and stores the row and the bytes, with the sha256 of the bytes", async () => {
    const issue = await newIssue();
    const body = await uploaded(issue.id, "# Saved notes\n- README edited\n", "Pläne/../Übersicht.md");
    expect(body).toMatchObject({ fileName: "Übersicht.md", contentType: "text/markdown", sizeBytes: 30, sha256: createHash("sha256").update("# Saved notes\n- README edited\n").digest("hex") });
    expect(Object.keys(body).sort()).toEqual(["contentType", "createdAt", "fileName", "id", "sha256", "sizeBytes"]);
    const row = await db().issueAttachment.findUniqueOrThrow({ where: { id: body.id } });
    expect(row).toMatchObject({ companyId: world.companyA.id, issueId: issue.id, sha256: body.sha256, storagePath: `attachments/${world.companyA.id}/${body.id}` });
    expect(await readFile(path.join(home, row.storagePath), "utf8")).toBe("# Saved notes\n- README edited\n");

    const list = await listRoute(new Request(`${PUBLIC_URL}/api/issues/${issue.id}/attachments`, { headers: { host: new URL(PUBLIC_URL).host, ...bearer(ownerKey) } }), { params: Promise.resolve({ id: issue.id }) });
    expect(list.status).toBe(200);
    expect(await json(list)).toEqual({ attachments: [{ ...body, contentUrl: `/api/issues/${issue.id}/attachments/${body.id}/content` }] });
  });

  it("a file over 25 MiB answers 413 attachment_too_large and leaves no row and no file", async () => {
    const issue = await newIssue();
    const before = await storedFiles();
    const response = await upload(issue.id, ownerKey, new Uint8Array(25 * 1024 * 1024 + 1));
    expect(response.status).toBe(413);
    expect(await json(response)).toMatchObject({ code: "attachment_too_large" });
    expect(await db().issueAttachment.count({ where: { issueId: issue.id } })).toBe(0);
    expect(await storedFiles()).toEqual(before);
  });

  it("a missing or control-character file name answers 422 and stores nothing", async () => {
    const issue = await newIssue();
    const missing = await upload(issue.id, ownerKey, "x", { "x-file-name": "" });
    expect(missing.status).toBe(422);
    expect(await json(missing)).toMatchObject({ code: "file_name_missing" });
    const control = await upload(issue.id, ownerKey, "x", { "x-file-name": encodeURIComponent("a\nb.txt") });
    expect(control.status).toBe(422);
    expect(await json(control)).toMatchObject({ code: "file_name_invalid" });
    expect(await db().issueAttachment.count({ where: { issueId: issue.id } })).toBe(0);
  });

  it("a member without issues:write (suspended) gets 403, another company's owner 404, an agent key 403: nothing written", async () => {
    const issue = await newIssue();
    const before = await storedFiles();
    const suspended = await insertBoardKey(db(), world.companyA.id, world.users.suspended.id);
    const outsider = await insertBoardKey(db(), world.companyB.id, world.users.otherOwner.id);
    const agent = await insertAgentKey(db(), world.companyA.id, world.a.agent.id);
    expect((await upload(issue.id, suspended.secret, "x")).status).toBe(403);
    expect((await upload(issue.id, outsider.secret, "x")).status).toBe(404);
    expect((await upload(issue.id, agent.secret, "x")).status).toBe(403);
    expect(await db().issueAttachment.count({ where: { issueId: issue.id } })).toBe(0);
    expect(await storedFiles()).toEqual(before);
  });
});

describe("downloading", () => {
  async function runOf(issueId: string, agentId = world.a.agent.id) {
    const run = await db().heartbeatRun.create({ data: { companyId: world.companyA.id, agentId, nativeIssueId: issueId, status: "running", runtimeMode: "native", startedAt: new Date() } });
    return mintRunAgentKey(db(), { companyId: world.companyA.id, agentId, runId: run.id });
  }

  it("the board gets the bytes with their type, length, sha256 and an attachment disposition", async () => {
    const issue = await newIssue();
    const stored = await uploaded(issue.id, "board bytes\n", "plan \"v2\".md");
    const response = await content(issue.id, stored.id, ownerKey);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/markdown");
    expect(response.headers.get("content-length")).toBe("12");
    expect(response.headers.get("x-content-sha256")).toBe(stored.sha256);
    expect(response.headers.get("content-disposition")).toBe(contentDisposition('plan "v2".md'));
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="plan _v2_.md"; filename\*=UTF-8''plan%20%22v2%22.md$/);
    expect(await response.text()).toBe("board bytes\n");
  });

  it("R-RC-5 the run-scoped key of a run of the same task reads the bytes, and they hash to X-Content-SHA256", async () => {
    const issue = await newIssue();
    const stored = await uploaded(issue.id, "saved sources for the agent\n");
    const key = await runOf(issue.id);
    const response = await content(issue.id, stored.id, key.secret);
    expect(response.status).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(response.headers.get("x-content-sha256"));
    expect(response.headers.get("x-content-sha256")).toBe(stored.sha256);
  });

  it("R-RC-5 the agent of a reconstruction fetches every attachment of its COPYBACK_RECONSTRUCTION by contentUrl and verifies its sha256 and size", async () => {
    const issue = await newIssue();
    const first = await uploaded(issue.id, "# design\n", "design.md");
    const second = await uploaded(issue.id, "fn main() {}\n", "main.rs");
    // The context exactly as the fresh session gets it (the intent's recorded hashes, authority.ts).
    const intent = { id: issue.id, issueId: issue.id, sourceRunId: issue.id, leaseId: issue.id, description: "rebuild", externalActionOutcomes: null, attachmentHashes: [first, second].map((a) => ({ attachmentId: a.id, sha256: a.sha256, sizeBytes: a.sizeBytes })) } as unknown as ReconstructionIntent;
    const context = reconstructionContext(intent, new Map([[first.id, { name: "design.md", contentType: "text/markdown" }], [second.id, { name: "main.rs", contentType: "text/markdown" }]]));
    const key = await runOf(issue.id);
    expect(context.attachments).toHaveLength(2);
    for (const attachment of context.attachments) {
      const [, , , issueId, , attachmentId] = attachment.contentUrl.split("/");
      expect(issueId).toBe(issue.id);
      const response = await content(issueId!, attachmentId!, key.secret);
      expect(response.status).toBe(200);
      const bytes = Buffer.from(await response.arrayBuffer());
      expect({ sha256: createHash("sha256").update(bytes).digest("hex"), sizeBytes: bytes.length }).toEqual({ sha256: attachment.sha256, sizeBytes: attachment.sizeBytes });
    }
  });

  it("R-RC-5 another task's run key, a standing agent key and another company's key read 404", async () => {
    const issue = await newIssue();
    const stored = await uploaded(issue.id, "private\n");
    const otherTask = await runOf((await newIssue()).id);
    const standing = await insertAgentKey(db(), world.companyA.id, world.a.agent.id);
    const otherCompanyAgent = await insertAgentKey(db(), world.companyB.id, world.b.agent.id);
    const outsider = await insertBoardKey(db(), world.companyB.id, world.users.otherOwner.id);
    for (const secret of [otherTask.secret, standing.secret, otherCompanyAgent.secret, outsider.secret]) {
      const response = await content(issue.id, stored.id, secret);
      expect(response.status).toBe(404);
      expect(await json(response)).toMatchObject({ code: "not_found" });
    }
    // The attachment asked for under another task of the same company: not found, even for the board.
    expect((await content((await newIssue()).id, stored.id, ownerKey)).status).toBe(404);
  });

  it("R-RC-3 a stored file whose size changed is refused (409 attachment_changed), for the board and the agent", async () => {
    const issue = await newIssue();
    const stored = await uploaded(issue.id, "original\n");
    await writeFile(path.join(home, "attachments", world.companyA.id, stored.id), "tampered with\n");
    const key = await runOf(issue.id);
    for (const secret of [ownerKey, key.secret]) {
      const response = await content(issue.id, stored.id, secret);
      expect(response.status).toBe(409);
      expect(await json(response)).toMatchObject({ code: "attachment_changed" });
    }
  });
});
