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
import { reconstructionContext } from "@copyback/core/recovery";
import { mintRunAgentKey } from "@copyback/core/runs";
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

describe("uploading multipart/form-data (curl -F, a plain HTML form)", () => {
  const CAP = 25 * 1024 * 1024;
  const BOUNDARY = "----copyback-test-boundary";

  interface Part {
    name: string;
    filename?: string;
    type?: string;
    body: string | Uint8Array;
  }

  /** A form as curl -F writes it: CRLF framing, the filename as raw UTF-8 in the part's header. */
  function form(parts: Part[], options: { close?: boolean } = {}): Uint8Array<ArrayBuffer> {
    const chunks: Buffer[] = [];
    for (const part of parts) {
      const disposition = `form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`;
      chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ""}\r\n`, "utf8"));
      chunks.push(Buffer.from(part.body));
      chunks.push(Buffer.from("\r\n"));
    }
    if (options.close !== false) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
    return new Uint8Array(Buffer.concat(chunks));
  }

  function uploadForm(issueId: string, body: BodyInit, contentType: string | null = `multipart/form-data; boundary=${BOUNDARY}`, init: RequestInit = {}) {
    const headers: Record<string, string> = { host: new URL(PUBLIC_URL).host, ...bearer(ownerKey) };
    if (contentType !== null) headers["content-type"] = contentType;
    const req = new Request(`${PUBLIC_URL}/api/issues/${issueId}/attachments`, { method: "POST", headers, body, ...init });
    return uploadRoute(req, { params: Promise.resolve({ id: issueId }) });
  }

  async function nothingStored(issueId: string, before: string[]) {
    expect(await db().issueAttachment.count({ where: { issueId } })).toBe(0);
    // Neither a final file nor a temporary `.upload-*` one is left behind.
    expect(await storedFiles()).toEqual(before);
  }

  it("one file part (as curl -F file=@notes.md sends it) answers 201 and stores the part's bytes under its UTF-8 filename and type; other fields are ignored", async () => {
    const issue = await newIssue();
    const text = "# Übersicht\n- parser\n";
    const response = await uploadForm(
      issue.id,
      form([
        { name: "note", body: "a field before the file" },
        { name: "file", filename: "Pläne/Übersicht.md", type: "text/markdown", body: text },
        { name: "submit", body: "Attach" },
      ]),
    );
    expect(response.status).toBe(201);
    const body = (await json(response)) as { id: string; fileName: string; sizeBytes: number; sha256: string; contentType: string };
    const bytes = Buffer.from(text, "utf8");
    // The same name rule as X-File-Name: the folder part is dropped.
    expect(body).toMatchObject({ fileName: "Übersicht.md", contentType: "text/markdown", sizeBytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
    const row = await db().issueAttachment.findUniqueOrThrow({ where: { id: body.id } });
    expect(await readFile(path.join(home, row.storagePath), "utf8")).toBe(text);
  });

  it("a browser's FormData with one File answers 201 with the file's exact bytes (binary, CRLF and the boundary's dashes inside)", async () => {
    const issue = await newIssue();
    const bytes = Buffer.concat([Buffer.from([0, 255, 13, 10, 45, 45]), Buffer.from(`\r\n--${BOUNDARY}x\r\n`), Buffer.alloc(200_000, 7)]);
    const data = new FormData();
    data.append("file", new Blob([bytes], { type: "application/octet-stream" }), "blob.bin");
    // The runtime writes the boundary into Content-Type itself.
    const response = await uploadForm(issue.id, data, null);
    expect(response.status).toBe(201);
    const body = (await json(response)) as { id: string; fileName: string; sizeBytes: number; sha256: string; contentType: string };
    expect(body).toMatchObject({ fileName: "blob.bin", contentType: "application/octet-stream", sizeBytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
    const row = await db().issueAttachment.findUniqueOrThrow({ where: { id: body.id } });
    expect(Buffer.compare(await readFile(path.join(home, row.storagePath)), bytes)).toBe(0);
  });

  it("a file part over 25 MiB answers 413 attachment_too_large while reading: the body is read no further than the cap and a little, and nothing is stored", async () => {
    const issue = await newIssue();
    const before = await storedFiles();
    const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const chunk = new Uint8Array(64 * 1024);
    let pulled = 0;
    // An endless body, no Content-Length: only the streaming cap can stop it.
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = pulled === 0 ? new Uint8Array(Buffer.concat([head, chunk])) : chunk;
        pulled += next.byteLength;
        controller.enqueue(next);
      },
    });
    const response = await uploadForm(issue.id, endless, undefined, { duplex: "half" } as RequestInit);
    expect(response.status).toBe(413);
    expect(await json(response)).toMatchObject({ code: "attachment_too_large" });
    // The cap, the multipart framing allowance, and the chunks in flight in the stream's buffers.
    expect(pulled).toBeGreaterThan(CAP);
    expect(pulled).toBeLessThan(CAP + 64 * 1024 + 1024 * 1024);
    await nothingStored(issue.id, before);
  });

  it("a whole body over the cap, its file part within it (padded with fields), answers 413 and stores nothing; a declared Content-Length over it is refused unread", async () => {
    const issue = await newIssue();
    const before = await storedFiles();
    // Fields within their count, each over its own truncation (4 KiB) so that together they pass the framing allowance.
    const fields = Array.from({ length: 15 }, (_, i) => ({ name: `pad${i}`, body: "p".repeat(5000) }));
    const padded = form([...fields, { name: "file", filename: "big.bin", type: "application/octet-stream", body: new Uint8Array(CAP) }]);
    const response = await uploadForm(issue.id, padded);
    expect(response.status).toBe(413);
    expect(await json(response)).toMatchObject({ code: "attachment_too_large" });
    const declared = await uploadForm(issue.id, "x", undefined, { headers: { host: new URL(PUBLIC_URL).host, ...bearer(ownerKey), "content-type": `multipart/form-data; boundary=${BOUNDARY}`, "content-length": String(CAP + 64 * 1024 + 1) } });
    expect(declared.status).toBe(413);
    await nothingStored(issue.id, before);
  });

  it("a file of exactly 25 MiB in a form is accepted", async () => {
    const issue = await newIssue();
    const response = await uploadForm(issue.id, form([{ name: "file", filename: "exact.bin", type: "application/octet-stream", body: new Uint8Array(CAP) }]));
    expect(response.status).toBe(201);
    expect(await json(response)).toMatchObject({ sizeBytes: CAP });
  });

  it("no file part answers 422 file_part_missing, two file parts 422 file_parts_multiple (the first one not kept): nothing stored", async () => {
    const issue = await newIssue();
    const before = await storedFiles();
    const none = await uploadForm(issue.id, form([{ name: "note", body: "only a field" }]));
    expect(none.status).toBe(422);
    expect(await json(none)).toMatchObject({ code: "file_part_missing" });
    const two = await uploadForm(
      issue.id,
      form([
        { name: "file", filename: "one.md", type: "text/markdown", body: "first file\n" },
        { name: "file", filename: "two.md", type: "text/markdown", body: "second file\n" },
      ]),
    );
    expect(two.status).toBe(422);
    expect(await json(two)).toMatchObject({ code: "file_parts_multiple" });
    await nothingStored(issue.id, before);
  });

  it("the name rules of X-File-Name apply to the part's filename (422 file_name_missing / file_name_invalid); too many parts is 422 multipart_too_many_parts, a malformed form 422 multipart_invalid: nothing stored", async () => {
    const issue = await newIssue();
    const before = await storedFiles();
    const cases: [body: Uint8Array<ArrayBuffer>, contentType: string | undefined, code: string][] = [
      [form([{ name: "file", filename: "", type: "text/plain", body: "x" }]), undefined, "file_name_missing"],
      [form([{ name: "file", filename: "a\tb.txt", type: "text/plain", body: "x" }]), undefined, "file_name_invalid"],
      // The body ends inside the file part: no closing boundary.
      [form([{ name: "file", filename: "cut.md", type: "text/markdown", body: "half a file" }], { close: false }), undefined, "multipart_invalid"],
      // More fields than a form with one file needs.
      [form([...Array.from({ length: 17 }, (_, i) => ({ name: `f${i}`, body: "v" })), { name: "file", filename: "x.md", body: "x" }]), undefined, "multipart_too_many_parts"],
      // No boundary in the Content-Type.
      [form([{ name: "file", filename: "x.md", body: "x" }]), "multipart/form-data", "multipart_invalid"],
    ];
    for (const [body, contentType, code] of cases) {
      const response = await uploadForm(issue.id, body, contentType);
      expect(response.status, code).toBe(422);
      expect(await json(response)).toMatchObject({ code });
    }
    await nothingStored(issue.id, before);
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
