// The console procedures through the real HTTP handler (app/api/trpc): status codes and the
// stable domain code that the pages match on. Local mode: a request with the console cookie is the
// local board (without it, anonymous: see local-console.integration-test.ts).
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import type * as TrpcRouteModule from "~/app/api/trpc/[trpc]/route";
import { CONSOLE_COOKIE, CONSOLE_SECRET } from "./auth-fixture";
import { buildWorld, type World } from "./routers-fixture";

// Type only (erased): the module itself is imported after the environment is set.
type TrpcRoute = typeof TrpcRouteModule;

const database = useTestDatabase();
let w: World;
let handlers: TrpcRoute;

beforeAll(async () => {
  // The web app reads its configuration once, on first use: point it at this file's database.
  process.env.DATABASE_URL = database.url();
  process.env.COPYBACK_DEPLOYMENT_MODE = "local";
  process.env.COPYBACK_CONSOLE_SECRET = CONSOLE_SECRET;
  w = await buildWorld(database.prisma());
  handlers = await import("~/app/api/trpc/[trpc]/route");
});

async function query(path: string, input: unknown) {
  const url = `http://127.0.0.1/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
  const response = await handlers.GET(new Request(url, { headers: CONSOLE_COOKIE }));
  return {
    status: response.status,
    body: (await response.json()) as Record<string, { json: Record<string, unknown> }>,
  };
}

async function mutate(path: string, input: unknown) {
  const response = await handlers.POST(
    new Request(`http://127.0.0.1/api/trpc/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...CONSOLE_COOKIE },
      body: JSON.stringify({ json: input }),
    }),
  );
  return {
    status: response.status,
    body: (await response.json()) as Record<string, { json: Record<string, unknown> }>,
  };
}

const domainCode = (body: Record<string, { json: Record<string, unknown> }>) =>
  (body.error?.json.data as { domainCode?: string } | undefined)?.domainCode;

describe("the console procedures over HTTP", () => {
  it("serves the board list to the local board", async () => {
    const { status, body } = await query("issues.list", {
      companyId: w.companyA.id,
      status: ["todo"],
    });
    expect(status).toBe(200);
    const items = (
      body.result as unknown as { data: { json: { items: Array<{ identifier: string }> } } }
    ).data.json.items;
    expect(items.map((i) => i.identifier)).toEqual(["ACME-2", "ACME-7"]);
  });

  it("answers another company's issue id with 404 not_found", async () => {
    const { status, body } = await query("issues.get", {
      companyId: w.companyA.id,
      issueId: w.issueB.id,
    });
    expect(status).toBe(404);
    expect(domainCode(body)).toBe("not_found");
  });

  it("answers a stale status version with 409 stale_status_version and bad input with 400", async () => {
    const stale = await mutate("issues.updateStatus", {
      companyId: w.companyA.id,
      issueId: w.issueA.id,
      status: "done",
      expectedStatusVersion: 7,
    });
    expect(stale.status).toBe(409);
    expect(domainCode(stale.body)).toBe("stale_status_version");
    const bad = await mutate("issues.addMessage", {
      companyId: w.companyA.id,
      issueId: w.issueA.id,
      body: "",
    });
    expect(bad.status).toBe(400);
    expect(
      (bad.body.error!.json.data as { zodError: { fieldErrors: Record<string, string[]> } })
        .zodError.fieldErrors.body,
    ).toEqual(["Write a message first."]);
    expect(
      await database.prisma().issue.findUniqueOrThrow({ where: { id: w.issueA.id } }),
    ).toMatchObject({ status: "in_progress", statusVersion: 1 });
  });
});
