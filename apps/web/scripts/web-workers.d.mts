// Types of web-workers.mjs (plain JavaScript: serve.mjs runs under node without a TypeScript loader).
export declare const MAX_DEFAULT_WORKERS: number;
export declare const MAX_WORKERS: number;
export declare function webWorkerCount(
  env: { COPYBACK_WEB_WORKERS?: string; COPYBACK_DEPLOYMENT_MODE?: string; COPYBACK_WEB_RENDER_CACHE?: string; COPYBACK_CONSOLE_SECRET?: string },
  cpus: number,
): number;
