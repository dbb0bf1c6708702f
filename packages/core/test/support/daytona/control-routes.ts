// Daytona's sandbox API (the paths of @daytona/api-client's SandboxApi) for the calls the
// SDK makes behind create/get/list/start/stop/archive/delete, labels and the intervals.
import { EmulatorError, type SandboxRegistry } from "./sandboxes";
import { route, type Route, type RequestContext } from "./http";

function intervalParam(ctx: RequestContext, allowNegative: boolean): number {
  const raw = ctx.params.interval ?? "";
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw) || (!allowNegative && value < 0)) throw new EmulatorError(400, `interval must be ${allowNegative ? "an integer" : "a non-negative integer"}, got ${raw}`);
  return value;
}

function optionalInt(body: Record<string, unknown>, key: string, min: number): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) throw new EmulatorError(400, `${key} must be an integer >= ${min}`);
  return value;
}

function stringRecord(value: unknown, key: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value) || Object.values(value).some((v) => typeof v !== "string")) {
    throw new EmulatorError(400, `${key} must be an object of strings`);
  }
  return value as Record<string, string>;
}

export function controlRoutes(sandboxes: SandboxRegistry): Route[] {
  const ok = (body: object) => ({ status: 200, body });
  const one = (ctx: RequestContext) => sandboxes.find(ctx.params.sandboxIdOrName ?? ctx.params.sandboxId ?? "");
  return [
    route("POST", "/sandbox", "create", async (ctx) => {
      const body = await ctx.json();
      const ephemeral = body.autoDeleteInterval === 0;
      const record = await sandboxes.create({
        name: typeof body.name === "string" && body.name ? body.name : undefined,
        labels: stringRecord(body.labels, "labels"),
        env: stringRecord(body.env, "env"),
        snapshot: typeof body.snapshot === "string" ? body.snapshot : undefined,
        target: typeof body.target === "string" ? body.target : undefined,
        cpu: optionalInt(body, "cpu", 1),
        gpu: optionalInt(body, "gpu", 0),
        memory: optionalInt(body, "memory", 1),
        disk: optionalInt(body, "disk", 1),
        autoStopInterval: optionalInt(body, "autoStopInterval", 0),
        autoArchiveInterval: optionalInt(body, "autoArchiveInterval", 0),
        autoDeleteInterval: ephemeral ? 0 : (optionalInt(body, "autoDeleteInterval", Number.MIN_SAFE_INTEGER) ?? -1),
      });
      return ok(sandboxes.dto(record));
    }),
    route("GET", "/sandbox", "list", async (ctx) => {
      let labels: Record<string, string> = {};
      const rawLabels = ctx.query.get("labels");
      if (rawLabels) {
        try {
          labels = stringRecord(JSON.parse(rawLabels), "labels");
        } catch (error) {
          throw error instanceof EmulatorError ? error : new EmulatorError(400, "labels must be a JSON object");
        }
      }
      const states = ctx.query.getAll("states");
      const limit = Number(ctx.query.get("limit") ?? 100);
      const offset = Number(ctx.query.get("cursor") ?? 0);
      const matching = sandboxes
        .list()
        .filter((r) => Object.entries(labels).every(([k, v]) => r.labels[k] === v))
        .filter((r) => states.length === 0 || states.includes(r.state));
      const page = matching.slice(offset, offset + limit);
      const next = offset + limit < matching.length ? String(offset + limit) : null;
      return ok({ items: page.map((r) => sandboxes.dto(r)), nextCursor: next });
    }),
    route("GET", "/sandbox/{sandboxIdOrName}", "get", async (ctx) => ok(sandboxes.dto(one(ctx)))),
    route("GET", "/sandbox/{sandboxId}/toolbox-proxy-url", "toolbox-proxy-url", async (ctx) => {
      one(ctx);
      return ok({ url: String(sandboxes.dto(one(ctx)).toolboxProxyUrl) });
    }),
    ...(["start", "stop", "archive"] as const).map((action) =>
      route("POST", `/sandbox/{sandboxIdOrName}/${action}`, action, async (ctx) => {
        const record = one(ctx);
        sandboxes.act(record, action, ctx.fault?.kind !== "never_confirms");
        return ok(sandboxes.dto(record));
      }),
    ),
    route("DELETE", "/sandbox/{sandboxIdOrName}", "delete", async (ctx) => {
      const record = one(ctx);
      sandboxes.act(record, "delete", ctx.fault?.kind !== "never_confirms");
      return ok(sandboxes.dto(record));
    }),
    route("PUT", "/sandbox/{sandboxIdOrName}/labels", "labels", async (ctx) => {
      const record = one(ctx);
      const body = await ctx.json();
      record.labels = stringRecord(body.labels, "labels");
      return ok({ labels: record.labels });
    }),
    route("POST", "/sandbox/{sandboxIdOrName}/autostop/{interval}", "autostop", async (ctx) => {
      const record = one(ctx);
      record.autoStopInterval = intervalParam(ctx, false);
      return ok(sandboxes.dto(record));
    }),
    route("POST", "/sandbox/{sandboxIdOrName}/autoarchive/{interval}", "autoarchive", async (ctx) => {
      const record = one(ctx);
      record.autoArchiveInterval = intervalParam(ctx, false);
      return ok(sandboxes.dto(record));
    }),
    route("POST", "/sandbox/{sandboxIdOrName}/autodelete/{interval}", "autodelete", async (ctx) => {
      const record = one(ctx);
      const interval = intervalParam(ctx, true);
      // Daytona stores any negative interval as the disabled value -1; an `ignored` fault leaves it.
      if (ctx.fault?.kind !== "ignored") record.autoDeleteInterval = interval < 0 ? -1 : interval;
      return ok(sandboxes.dto(record));
    }),
    route("POST", "/sandbox/{sandboxId}/last-activity", "last-activity", async (ctx) => {
      sandboxes.touch(one(ctx));
      return { status: 201 };
    }),
  ];
}
