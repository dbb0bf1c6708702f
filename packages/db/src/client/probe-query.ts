// Readiness probes (the worker's /readyz, the console's /api/readyz): does the database answer
// one query now? Any failure or a timeout is "unreachable", with the last line of its message
// (Prisma's errors end with the useful one, e.g. "Can't reach database server at ...").

export type ReadinessProbe = { reachable: true; latencyMs: number } | { reachable: false; error: string };

export async function probeQuery(query: () => Promise<unknown>, timeoutMs: number): Promise<ReadinessProbe> {
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      query(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs))),
    ]);
    return { reachable: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { reachable: false, error: message.split("\n").filter((line) => line.trim() !== "").slice(-1)[0] ?? message };
  } finally {
    clearTimeout(timer);
  }
}
