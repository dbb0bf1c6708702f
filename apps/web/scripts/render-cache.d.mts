// Types of render-cache.mjs (plain JavaScript: serve.mjs runs under node without a TypeScript loader).
export declare const TTL_MS: number;
export declare const MAX_ENTRIES: number;
export declare const MAX_ENTRY_BYTES: number;
export declare const MAX_TOTAL_BYTES: number;
export declare const LOCAL_CONSOLE_COOKIE: string;
export declare const KEYED_HEADERS: readonly string[];
export declare function renderCacheEnabled(env: Readonly<Record<string, string | undefined>>): boolean;
export declare function cacheKeyOf(
  request: { method?: string; url?: string; headers: Record<string, string | string[] | undefined> },
  consoleSecret: string,
): { key: string; scope: string } | null;
export declare function scopeOfNotification(payload: string | undefined): { all: true } | { all: false; issueId: string };
export declare function storableHeaders(
  status: number,
  headers: Record<string, string | string[] | number | undefined>,
): Record<string, string | string[]> | null;
export interface RenderCacheEntry {
  scope: string;
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  storedAt: number;
}
export declare class RenderCache {
  constructor(options?: { now?: () => number });
  entries: Map<string, RenderCacheEntry>;
  bytes: number;
  generation: number;
  listening: boolean;
  stats: { hits: number; shared: number; misses: number; bypassed: number; stored: number; drops: number };
  versionOf(scope: string): string;
  dropAll(): void;
  dropScope(scope: string): void;
  applyNotification(payload: string | undefined): void;
  setListening(listening: boolean): void;
  get(key: string): RenderCacheEntry | undefined;
  store(key: string, scope: string, version: string, status: number, headers: Record<string, string | string[]>, body: Buffer): boolean;
}
