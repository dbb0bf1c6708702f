// Daytona's toolbox API (the paths of @daytona/toolbox-api-client, under
// `<toolboxProxyUrl>/<sandboxId>`): files and processes of a running sandbox, real on disk.
// A sandbox that is not started refuses every toolbox call.
import { createReadStream, promises as fs } from "node:fs";
import * as path from "node:path";
import { fileInfo, resolveInSandbox, SandboxPathError } from "./file-store";
import { route, type Reply, type RequestContext, type Route } from "./http";
import { boundaryOf, closing, newBoundary, parseMultipart, partHeader } from "./multipart";
import { runCommand, type RunningCommand } from "./process-runner";
import { EmulatorError, type SandboxRecord, type SandboxRegistry } from "./sandboxes";
import { toolboxAvailable } from "./state-machine";

interface Session {
  commands: Map<string, { command: string; run: RunningCommand }>;
}

export interface ToolboxState {
  sessions: Map<string, Map<string, Session>>;
}

const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString("utf8");

export function toolboxRoutes(sandboxes: SandboxRegistry, state: ToolboxState): Route[] {
  const running = (ctx: RequestContext): SandboxRecord => {
    const record = sandboxes.find(ctx.params.sandboxId ?? "");
    if (!toolboxAvailable(record.state)) throw new EmulatorError(400, `Sandbox is not running (state: ${record.state})`);
    sandboxes.touch(record);
    return record;
  };
  const hostPath = (record: SandboxRecord, sandboxPath: string | null): string => {
    try {
      return resolveInSandbox(record.dir, sandboxPath ?? "");
    } catch (error) {
      if (error instanceof SandboxPathError) throw new EmulatorError(400, error.message);
      throw error;
    }
  };
  const fsCall = async (work: () => Promise<Reply>): Promise<Reply> => {
    try {
      return await work();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw new EmulatorError(404, "file not found");
      if (code === "ENOTEMPTY" || code === "EISDIR" || code === "ENOTDIR" || code === "EEXIST") throw new EmulatorError(400, String((error as Error).message));
      throw error;
    }
  };
  const sessionsOf = (record: SandboxRecord) => {
    let map = state.sessions.get(record.id);
    if (!map) state.sessions.set(record.id, (map = new Map()));
    return map;
  };
  const session = (record: SandboxRecord, id: string | undefined): Session => {
    const found = sessionsOf(record).get(id ?? "");
    if (!found) throw new EmulatorError(404, `session ${id} not found`);
    return found;
  };
  const command = (record: SandboxRecord, ctx: RequestContext) => {
    const found = session(record, ctx.params.sessionId).commands.get(ctx.params.commandId ?? "");
    if (!found) throw new EmulatorError(404, `command ${ctx.params.commandId} not found`);
    return found;
  };
  const base = "/{sandboxId}";
  return [
    route("POST", `${base}/files/bulk-upload`, "upload", async (ctx) => {
      const record = running(ctx);
      const boundary = boundaryOf(ctx.req.headers["content-type"]);
      if (!boundary) throw new EmulatorError(400, "expected a multipart/form-data body");
      let parts;
      try {
        parts = parseMultipart(await ctx.body(), boundary);
      } catch (error) {
        throw new EmulatorError(400, `malformed multipart body: ${(error as Error).message}`);
      }
      const paths = new Map<string, string>();
      for (const part of parts) {
        const match = /^files\[(\d+)\]\.path$/.exec(part.name);
        if (match?.[1] !== undefined) paths.set(match[1], part.data.toString("utf8"));
      }
      const writes: Array<[string, Buffer]> = [];
      for (const part of parts) {
        const index = /^files\[(\d+)\]\.file$/.exec(part.name)?.[1];
        if (index === undefined) continue;
        const destination = paths.get(index);
        if (destination === undefined) throw new EmulatorError(400, `files[${index}].file has no files[${index}].path`);
        writes.push([hostPath(record, destination), part.data]);
      }
      for (const [target, data] of writes) {
        await fs.mkdir(path.dirname(target), { recursive: true });
        await fs.writeFile(target, data);
      }
      return { status: 200 };
    }),
    route("POST", `${base}/files/bulk-download`, "download", async (ctx) => {
      const record = running(ctx);
      const body = await ctx.json();
      if (!Array.isArray(body.paths) || body.paths.some((p) => typeof p !== "string")) throw new EmulatorError(400, "paths must be an array of strings");
      const boundary = newBoundary();
      // Each file is stat'ed now and read from disk while the answer streams.
      const parts: Array<{ header: Buffer; size: number; file?: string; payload?: Buffer }> = [];
      for (const sandboxPath of body.paths as string[]) {
        try {
          const file = hostPath(record, sandboxPath);
          const stat = await fs.stat(file);
          if (!stat.isFile()) throw new EmulatorError(400, "not a regular file");
          parts.push({ header: partHeader(boundary, "file", sandboxPath, "application/octet-stream", stat.size), size: stat.size, file });
        } catch (error) {
          const status = error instanceof EmulatorError ? error.status : (error as NodeJS.ErrnoException).code === "ENOENT" ? 404 : 400;
          const code = status === 404 ? "FILE_NOT_FOUND" : "BAD_REQUEST";
          const payload = Buffer.from(JSON.stringify({ message: `${sandboxPath}: ${(error as Error).message}`, statusCode: status, code }));
          parts.push({ header: partHeader(boundary, "error", sandboxPath, "application/json", payload.length), size: payload.length, payload });
        }
      }
      const end = closing(boundary);
      const length = parts.reduce((sum, p) => sum + p.header.length + p.size + 2, end.length);
      async function* chunks(): AsyncIterable<Buffer> {
        for (const part of parts) {
          yield part.header;
          if (part.payload) yield part.payload;
          else for await (const chunk of createReadStream(part.file ?? "")) yield chunk as Buffer;
          yield Buffer.from("\r\n");
        }
        yield end;
      }
      return { status: 200, headers: { "content-type": `multipart/form-data; boundary=${boundary}` }, streamed: { length, chunks } };
    }),
    route("GET", `${base}/files/info`, "file-info", async (ctx) => {
      const record = running(ctx);
      const sandboxPath = ctx.query.get("path");
      return fsCall(async () => ({ status: 200, body: await fileInfo(hostPath(record, sandboxPath), sandboxPath ?? "") }));
    }),
    route("GET", `${base}/files`, "list-files", async (ctx) => {
      const record = running(ctx);
      const sandboxPath = ctx.query.get("path") ?? ".";
      const dir = hostPath(record, sandboxPath);
      return fsCall(async () => {
        const names = (await fs.readdir(dir)).sort();
        const infos = await Promise.all(names.map((name) => fileInfo(path.join(dir, name), path.posix.join(sandboxPath, name))));
        return { status: 200, body: infos };
      });
    }),
    route("POST", `${base}/files/folder`, "create-folder", async (ctx) => {
      const record = running(ctx);
      const mode = ctx.query.get("mode") ?? "755";
      if (!/^[0-7]{3,4}$/.test(mode)) throw new EmulatorError(400, `mode must be octal, got ${mode}`);
      const target = hostPath(record, ctx.query.get("path"));
      return fsCall(async () => {
        await fs.mkdir(target, { recursive: true, mode: parseInt(mode, 8) });
        return { status: 201 };
      });
    }),
    route("DELETE", `${base}/files`, "delete-file", async (ctx) => {
      const record = running(ctx);
      const target = hostPath(record, ctx.query.get("path"));
      if (target === record.dir) throw new EmulatorError(400, "refusing to delete the sandbox root");
      return fsCall(async () => {
        const stat = await fs.lstat(target);
        if (stat.isDirectory() && ctx.query.get("recursive") !== "true") await fs.rmdir(target);
        else await fs.rm(target, { recursive: true });
        return { status: 204 };
      });
    }),
    route("POST", `${base}/files/permissions`, "permissions", async (ctx) => {
      const record = running(ctx);
      const target = hostPath(record, ctx.query.get("path"));
      const mode = ctx.query.get("mode");
      if (mode !== null && !/^[0-7]{3,4}$/.test(mode)) throw new EmulatorError(400, `mode must be octal, got ${mode}`);
      return fsCall(async () => {
        await fs.lstat(target);
        if (mode !== null) await fs.chmod(target, parseInt(mode, 8));
        return { status: 200 };
      });
    }),
    route("POST", `${base}/process/execute`, "execute", async (ctx) => {
      const record = running(ctx);
      const body = await ctx.json();
      if (typeof body.command !== "string" || body.command.length === 0) throw new EmulatorError(400, "command is required");
      const timeout = typeof body.timeout === "number" ? body.timeout : undefined;
      const cwd = typeof body.cwd === "string" ? hostPath(record, body.cwd) : record.dir;
      const run = runCommand(body.command, cwd, body.envs as Record<string, string> | undefined, timeout);
      await run.done;
      if (run.timedOut) throw new EmulatorError(408, "command execution timeout");
      // Daytona's execute answers stdout and stderr merged into `result`.
      return { status: 200, body: { exitCode: run.exitCode, result: text([...run.stdout, ...run.stderr]) } };
    }),
    route("POST", `${base}/process/session`, "session-create", async (ctx) => {
      const record = running(ctx);
      const body = await ctx.json();
      if (typeof body.sessionId !== "string" || body.sessionId.length === 0) throw new EmulatorError(400, "sessionId is required");
      if (sessionsOf(record).has(body.sessionId)) throw new EmulatorError(409, `session ${body.sessionId} already exists`);
      sessionsOf(record).set(body.sessionId, { commands: new Map() });
      return { status: 201 };
    }),
    route("POST", `${base}/process/session/{sessionId}/exec`, "session-exec", async (ctx) => {
      const record = running(ctx);
      const target = session(record, ctx.params.sessionId);
      const body = await ctx.json();
      if (typeof body.command !== "string" || body.command.length === 0) throw new EmulatorError(400, "command is required");
      const cmdId = `cmd-${target.commands.size + 1}-${Date.now().toString(36)}`;
      const run = runCommand(body.command, record.dir, undefined, undefined);
      target.commands.set(cmdId, { command: body.command, run });
      if (body.runAsync === true || body.async === true) return { status: 202, body: { cmdId } };
      await run.done;
      const output = text([...run.stdout, ...run.stderr]);
      return { status: 200, body: { cmdId, exitCode: run.exitCode, output, stdout: text(run.stdout), stderr: text(run.stderr) } };
    }),
    route("GET", `${base}/process/session`, "session-list", async (ctx) => {
      const record = running(ctx);
      const sessions = [...sessionsOf(record)].map(([sessionId, s]) => ({
        sessionId,
        commands: [...s.commands].map(([id, c]) => ({ id, command: c.command, exitCode: c.run.exitCode })),
      }));
      return { status: 200, body: sessions };
    }),
    route("GET", `${base}/process/session/{sessionId}`, "session-get", async (ctx) => {
      const record = running(ctx);
      const target = session(record, ctx.params.sessionId);
      const commands = [...target.commands].map(([id, c]) => ({ id, command: c.command, exitCode: c.run.exitCode }));
      return { status: 200, body: { sessionId: ctx.params.sessionId, commands } };
    }),
    route("GET", `${base}/process/session/{sessionId}/command/{commandId}`, "session-command", async (ctx) => {
      const found = command(running(ctx), ctx);
      return { status: 200, body: { id: ctx.params.commandId, command: found.command, exitCode: found.run.exitCode } };
    }),
    route("GET", `${base}/process/session/{sessionId}/command/{commandId}/logs`, "session-logs", async (ctx) => {
      const { run } = command(running(ctx), ctx);
      return { status: 200, body: { output: text([...run.stdout, ...run.stderr]), stdout: text(run.stdout), stderr: text(run.stderr) } };
    }),
    route("DELETE", `${base}/process/session/{sessionId}`, "session-delete", async (ctx) => {
      const record = running(ctx);
      const target = session(record, ctx.params.sessionId);
      for (const { run } of target.commands.values()) run.kill();
      sessionsOf(record).delete(ctx.params.sessionId ?? "");
      return { status: 204 };
    }),
  ];
}
