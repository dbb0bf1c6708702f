// The text/event-stream wire format (WHATWG HTML, "Server-sent events"): fields `event:`,
// `data:` (one line per line of data), `retry:`, comments starting with ":", and a blank line
// ending each event.

export function sseEvent(event: string, data: unknown): string {
  const text = typeof data === "string" ? data : JSON.stringify(data);
  const lines = text.split(/\r\n|\r|\n/).map((line) => `data: ${line}`);
  return `event: ${event}\n${lines.join("\n")}\n\n`;
}

/** A comment line: ignored by EventSource, but it keeps proxies and load balancers from timing the stream out. */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, " ")}\n\n`;
}

/** How long EventSource waits before it reconnects on its own. */
export function sseRetry(ms: number): string {
  return `retry: ${Math.max(0, Math.trunc(ms))}\n\n`;
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "Content-Type": "text/event-stream; charset=utf-8",
  // no-transform: compression middleware (next start's gzip) must not buffer the stream.
  "Cache-Control": "no-cache, no-transform",
  // nginx and similar proxies buffer responses unless told not to.
  "X-Accel-Buffering": "no",
};
