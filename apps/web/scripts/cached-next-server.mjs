// The console's server when the render cache is on (render-cache.mjs; serve.mjs chooses): Next.js
// itself, through its documented custom-server API (`next({ dev: false })` and its request
// handler: the same routing, rendering and next.config as `next start`), behind a small layer that
// answers cacheable board requests from the cache and keeps copies of their rendered answers.
//
//   node scripts/cached-next-server.mjs -H 127.0.0.1 -p 3000     (the arguments of `next start` it takes)
//
// Every answer carries `x-copyback-render-cache: hit | miss` when its request was cacheable (the
// benchmark counts them); others pass through untouched.
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import next from "next";
import { startChangeListener } from "./change-listener.mjs";
import { RenderCache, cacheKeyOf, storableHeaders } from "./render-cache.mjs";

export const CACHE_HEADER = "x-copyback-render-cache";

/** `-H host -p port` (and the long spellings), the subset of `next start`'s arguments serve.mjs passes. */
export function parseListenArgs(args) {
  let hostname = "0.0.0.0";
  let port = Number(process.env.PORT ?? 3000);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = args[i + 1];
    if ((arg === "-H" || arg === "--hostname") && value !== undefined) {
      hostname = value;
      i++;
    } else if ((arg === "-p" || arg === "--port") && value !== undefined) {
      port = Number(value);
      i++;
    } else throw new Error(`cached-next-server: unsupported argument "${arg}" (only -H and -p)`);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`cached-next-server: bad port`);
  return { hostname, port };
}

/**
 * Wraps `handle(req, res)` (Next.js's) with the cache: a cacheable request is answered from a
 * fresh entry after the fence, or shares a render of the same key already under way since the
 * same version of its scope, or is rendered (and its answer kept if storable).
 *
 * Sharing a render is as safe as a hit: the render started after its own fence at version v of
 * its scope, so it reads everything committed before it started; this request's fence found the
 * version still v, so nothing of that scope was committed between the render's start and this
 * request's arrival.
 * Whatever the render reads later is newer than this request, as a render of its own would be.
 */
export function cachingHandler({ handle, cache, fence, consoleSecret }) {
  /** @type {Map<string, { version: string; answer: Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer } | null> }>} */
  const flights = new Map();
  return async (req, res) => {
    const cacheable = cacheKeyOf(req, consoleSecret);
    if (cacheable === null) {
      cache.stats.bypassed++;
      return handle(req, res);
    }
    // The fence before the lookup: every change committed before this request arrived has
    // dropped its entries by now (render-cache.mjs).
    const { key, scope } = cacheable;
    const fenced = (await fence()) === true;
    const version = cache.versionOf(scope);
    if (fenced) {
      const entry = cache.get(key);
      if (entry) {
        cache.stats.hits++;
        return replay(res, entry, "hit");
      }
      const flight = flights.get(key);
      if (flight && flight.version === version) {
        const answer = await flight.answer;
        if (answer) {
          cache.stats.shared++;
          return replay(res, answer, "shared");
        }
      }
    }
    cache.stats.misses++;
    res.setHeader(CACHE_HEADER, "miss");
    const copy = captureResponse(res);
    /** @type {(answer: { status: number; headers: Record<string, string | string[]>; body: Buffer } | null) => void} */
    let settle = () => {};
    if (fenced) {
      const flight = { version, answer: new Promise((resolve) => (settle = resolve)) };
      flights.set(key, flight);
      res.once("close", () => {
        if (flights.get(key) === flight) flights.delete(key);
        settle(null);
      });
    }
    res.once("finish", () => {
      const captured = copy();
      const { [CACHE_HEADER]: _ours, ...headers } = captured?.headers ?? {};
      const kept = captured ? storableHeaders(res.statusCode, headers) : null;
      if (!captured || !kept) return settle(null);
      const answer = { status: res.statusCode, headers: kept, body: captured.body };
      settle(answer);
      if (fenced) cache.store(key, scope, version, answer.status, answer.headers, answer.body);
    });
    return handle(req, res);
  };
}

function replay(res, answer, how) {
  res.writeHead(answer.status, { ...answer.headers, "content-length": answer.body.length, [CACHE_HEADER]: how });
  res.end(answer.body);
}

/**
 * Keeps a copy of everything written to `res` (write, end, writeHead's headers); the returned
 * function gives the body and headers once the response finished, or null if it cannot be
 * replayed (raw header arrays, too large).
 */
function captureResponse(res) {
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  let replayable = true;
  /** @type {Record<string, unknown>} */
  const headArgs = {};
  const keep = (chunk, encoding) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function" || !replayable) return;
    const buffer = typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? encoding : "utf8") : Buffer.from(chunk);
    size += buffer.length;
    if (size > 1024 * 1024) {
      replayable = false;
      chunks.length = 0;
      return;
    }
    chunks.push(buffer);
  };
  const { write, end, writeHead } = res;
  res.write = function (chunk, encoding, callback) {
    keep(chunk, encoding);
    return write.call(this, chunk, encoding, callback);
  };
  res.end = function (chunk, encoding, callback) {
    keep(chunk, encoding);
    return end.call(this, chunk, encoding, callback);
  };
  res.writeHead = function (status, ...rest) {
    const headers = typeof rest[0] === "string" ? rest[1] : rest[0];
    if (Array.isArray(headers)) replayable = false;
    else if (headers) for (const [name, value] of Object.entries(headers)) headArgs[name.toLowerCase()] = value;
    return writeHead.call(this, status, ...rest);
  };
  return () => (replayable ? { body: Buffer.concat(chunks), headers: { ...res.getHeaders(), ...headArgs } } : null);
}

/** Starts the console with the render cache: what `next start ARGS` would serve, plus the cache. */
export async function serveWithRenderCache(args) {
  const { hostname, port } = parseListenArgs(args);
  process.env.NODE_ENV ??= "production";
  const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const app = next({ dev: false, dir, hostname, port });
  await app.prepare();
  const cache = new RenderCache();
  const listener = startChangeListener({ databaseUrl: process.env.DATABASE_URL ?? "", cache });
  const handler = cachingHandler({ handle: app.getRequestHandler(), cache, fence: listener.fence, consoleSecret: process.env.COPYBACK_CONSOLE_SECRET ?? "" });
  const server = http.createServer((req, res) => {
    handler(req, res).catch((error) => {
      console.error(error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    });
  });
  server.listen(port, hostname, () => console.log(`[copyback web] ready on http://${hostname}:${port} (render cache on)`));
  const stop = async () => {
    server.close();
    await listener.stop();
    process.exit(0);
  };
  for (const signal of ["SIGTERM", "SIGINT"]) process.once(signal, () => void stop());
}

// Run directly (a node:cluster worker of serve.mjs): serve.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await serveWithRenderCache(process.argv.slice(2));
