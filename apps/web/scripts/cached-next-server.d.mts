// Types of cached-next-server.mjs (plain JavaScript, run by serve.mjs without a TypeScript loader).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RenderCache } from "./render-cache.mjs";
export declare const CACHE_HEADER: string;
export declare function parseListenArgs(args: string[]): { hostname: string; port: number };
export declare function cachingHandler(options: {
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;
  cache: RenderCache;
  fence: () => Promise<boolean>;
  consoleSecret: string;
}): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
export declare function serveWithRenderCache(args: string[]): Promise<void>;
