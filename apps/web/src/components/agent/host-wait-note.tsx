/**
 * Issue 23 (host affinity): a queued run whose task's workspace is bound to a host that has no
 * live worker says what it waits for, quietly (the calm tone of "Restoring saved work…": nothing
 * is wrong and nobody has to act on this task; the run starts by itself once a worker of that host
 * is back). The server sends it (runs.latestForIssue `waiting`); absent, nothing is shown.
 */
export function HostWaitNote({ waiting }: { waiting: { code: string; hostId: string; message: string } | null }) {
  if (!waiting) return null;
  return (
    <div className="space-y-1 rounded-md bg-slate-50 px-3 py-2" data-testid="run-host-wait" data-code={waiting.code}>
      <p role="status" className="flex items-center gap-2 text-sm text-slate-700">
        <span aria-hidden="true" className="size-1.5 animate-pulse rounded-full bg-slate-400" />
        {waiting.message}.
      </p>
      <p className="text-xs text-slate-500">This task&apos;s workspace is kept on that host, so the run starts there by itself once a worker of that host is running again.</p>
    </div>
  );
}
