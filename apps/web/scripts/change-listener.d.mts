// Types of change-listener.mjs (plain JavaScript, run by serve.mjs without a TypeScript loader).
import type { RenderCache } from "./render-cache.mjs";
export declare const CHANNEL: string;
export declare function startChangeListener(options: {
  databaseUrl: string;
  cache: RenderCache;
  log?: (line: string) => void;
  retryMs?: { first: number; max: number };
}): { fence(): Promise<boolean>; stop(): Promise<void> };
