// Types of response-compression.mjs (plain JavaScript, like web-workers.mjs).
export declare function compressResponses(env: Readonly<Record<string, string | undefined>>): boolean;
