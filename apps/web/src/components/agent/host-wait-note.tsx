/**
 * Issue 23 (host affinity): a run bound to a host that is not there says so, quietly (the calm
 * tone of "Restoring saved work…": nothing is wrong with the task and nobody has to act on it).
 * A queued run waits for a worker of its host (`waiting_for_host`) and starts there by itself; a
 * running run whose host has no live worker at all (`host_worker_gone`: the whole host stopped
 * mid-run) keeps its work on that host, and that host's own recovery picks it up once a worker of
 * it is back. The server sends it (runs.latestForIssue `waiting`); absent, nothing is shown.
 */
const DETAIL: Readonly<Record<string, string>> = {
  waiting_for_host: "This task's workspace is kept on that host, so the run starts there by itself once a worker of that host is running again.",
  host_worker_gone: "Its work is kept on that host; recovery picks it up there once a worker of that host is running again.",
};

/** How often the task page re-reads its current run for this note (the panel's other updates are live). */
export const HOST_WAIT_REREAD_MS = 15_000;

/**
 * A host's workers going away changes no run row, so no live update would bring either note: a
 * queued or running run is re-read every HOST_WAIT_REREAD_MS (a settled one never, it says nothing).
 */
export function hostWaitRereadMs(status: string | undefined): number | false {
  return status === "queued" || status === "running" ? HOST_WAIT_REREAD_MS : false;
}

export function HostWaitNote({ waiting }: { waiting: { code: string; hostId: string; message: string } | null }) {
  if (!waiting) return null;
  const detail = DETAIL[waiting.code];
  return (
    <div className="space-y-1 rounded-md bg-slate-50 px-3 py-2" data-testid="run-host-wait" data-code={waiting.code}>
      <p role="status" className="flex items-center gap-2 text-sm text-slate-700">
        <span aria-hidden="true" className="size-1.5 animate-pulse rounded-full bg-slate-400" />
        {waiting.message}.
      </p>
      {detail ? <p className="text-xs text-slate-500">{detail}</p> : null}
    </div>
  );
}
