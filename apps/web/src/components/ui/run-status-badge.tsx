export type RunStatusValue =
  "queued" | "running" | "succeeded" | "failed" | "cancelled" | "timed_out";

export const RUN_STATUS_LABEL: Record<RunStatusValue, string> = {
  queued: "Queued",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  cancelled: "Cancelled",
  timed_out: "Timed out",
};

const TONE: Record<RunStatusValue, string> = {
  queued: "bg-slate-100 text-slate-700 ring-slate-200",
  running: "bg-sky-50 text-sky-800 ring-sky-200",
  succeeded: "bg-emerald-50 text-emerald-800 ring-emerald-200",
  failed: "bg-red-50 text-red-800 ring-red-200",
  cancelled: "bg-slate-50 text-slate-500 ring-slate-200",
  timed_out: "bg-amber-50 text-amber-800 ring-amber-200",
};

export function RunStatusBadge({ status }: { status: RunStatusValue }) {
  return (
    <span
      data-testid="run-status"
      className={`inline-flex items-center whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${TONE[status]}`}
    >
      {RUN_STATUS_LABEL[status]}
    </span>
  );
}
