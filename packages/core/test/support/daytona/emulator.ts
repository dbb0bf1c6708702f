// The Daytona emulator: one HTTP server on 127.0.0.1 serving Daytona's sandbox API under
// `/api` and the toolbox under `/toolbox/<sandboxId>`, with real files and processes,
// Daytona's state machine, timers on a test-owned clock, and faults on demand.
// A test tool only: never registered as a provider, never exported from src.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { manualClock, type EmulatorClock } from "./clock";
import { controlRoutes } from "./control-routes";
import { faultPlan, type FaultPlan } from "./faults";
import { errorBody, serve } from "./http";
import { SandboxRegistry, type SandboxRecord } from "./sandboxes";
import { toolboxAvailable } from "./state-machine";
import { toolboxRoutes, type ToolboxState } from "./toolbox-routes";
import { acceptWebSocket } from "./websocket";

export interface DaytonaEmulatorOptions {
  /** Each sandbox's files live in `<root>/<sandboxId>`. */
  root: string;
  apiKey?: string;
  port?: number;
  clock?: EmulatorClock;
  /** Real milliseconds a transitional state (starting, stopping, archiving...) lasts. */
  settleMs?: number;
}

export interface DaytonaEmulator {
  /** Pass as the SDK's `apiUrl`. */
  apiUrl: string;
  url: string;
  apiKey: string;
  clock: EmulatorClock;
  faults: FaultPlan;
  sandboxes: SandboxRegistry;
  /** The record of a sandbox (throws 404-style for unknown ids). */
  sandbox(id: string): SandboxRecord;
  /** Daytona archives a stopped sandbox without the controller asking. */
  archiveBehindBack(id: string): void;
  /** Daytona auto-deletes a sandbox without the controller asking. */
  deleteBehindBack(id: string): void;
  close(): Promise<void>;
}

const FOLLOW_LOGS = /^\/toolbox\/([^/]+)\/process\/session\/([^/]+)\/command\/([^/]+)\/logs$/;

export async function startDaytonaEmulator(options: DaytonaEmulatorOptions): Promise<DaytonaEmulator> {
  const apiKey = options.apiKey ?? "emulator-api-key";
  const clock = options.clock ?? manualClock();
  const faults = faultPlan();
  let base = "";
  const sandboxes = new SandboxRegistry({ root: options.root, clock, toolboxProxyUrl: () => `${base}/toolbox`, settleMs: options.settleMs ?? 20 });
  const toolboxState: ToolboxState = { sessions: new Map() };
  const api = controlRoutes(sandboxes);
  const toolbox = toolboxRoutes(sandboxes, toolboxState);
  const server: Server = createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://emulator").pathname;
    const [routes, prefix] = pathname.startsWith("/api/") || pathname === "/api" ? [api, 4] : pathname.startsWith("/toolbox/") ? [toolbox, 8] : [undefined, 0];
    const fail = (error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify(errorBody(500, String(error), pathname)));
    };
    if (!routes) {
      req.resume();
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify(errorBody(404, `Cannot ${req.method} ${pathname}`, pathname)));
      return;
    }
    serve(routes, faults, apiKey, prefix, req, res).catch(fail);
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex) => followLogs(req, socket));
  const sockets = new Set<Duplex>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  // The SDK's streaming getSessionCommandLogs: stdout/stderr chunks framed by 0x01x3 / 0x02x3
  // prefixes, the socket closed when the command exits.
  function followLogs(req: IncomingMessage, socket: Duplex) {
    const url = new URL(req.url ?? "/", "http://emulator");
    const match = FOLLOW_LOGS.exec(url.pathname);
    const reject = (status: number, text: string) => socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\n\r\n`);
    if (req.headers.authorization !== `Bearer ${apiKey}`) return reject(401, "Unauthorized");
    if (!match) return reject(404, "Not Found");
    const [, sandboxId, sessionId, commandId] = match.map((part) => decodeURIComponent(part));
    const record = sandboxes.records.get(sandboxId ?? "");
    if (!record || !toolboxAvailable(record.state)) return reject(400, "Bad Request");
    const entry = toolboxState.sessions.get(record.id)?.get(sessionId ?? "")?.commands.get(commandId ?? "");
    if (!entry) return reject(404, "Not Found");
    // A `lost_reply` fault on op `session-logs-follow`: the stream is dropped as soon as it opens.
    const fault = faults.take("session-logs-follow", record.id);
    if (fault?.kind === "lost_reply") {
      socket.destroy();
      return;
    }
    const ws = acceptWebSocket(req, socket);
    const prefixes = { stdout: Buffer.from([1, 1, 1]), stderr: Buffer.from([2, 2, 2]) };
    for (const stream of ["stdout", "stderr"] as const) {
      for (const chunk of entry.run[stream]) ws.sendBinary(Buffer.concat([prefixes[stream], chunk]));
    }
    entry.run.onChunk((stream, chunk) => ws.sendBinary(Buffer.concat([prefixes[stream], chunk])));
    void entry.run.done.then(() => setImmediate(() => ws.close()));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiUrl: `${base}/api`,
    url: base,
    apiKey,
    clock,
    faults,
    sandboxes,
    sandbox: (id) => sandboxes.find(id),
    archiveBehindBack(id) {
      const record = sandboxes.find(id);
      if (record.state !== "stopped") throw new Error(`only a stopped sandbox archives (state: ${record.state})`);
      sandboxes.force(record, "archived");
    },
    deleteBehindBack(id) {
      sandboxes.force(sandboxes.find(id), "destroyed");
    },
    async close() {
      faults.releaseHangs();
      for (const sessions of toolboxState.sessions.values()) {
        for (const s of sessions.values()) for (const c of s.commands.values()) c.run.kill();
      }
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
