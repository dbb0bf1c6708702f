import { Timestamp } from "~/components/format/timestamp";
import { runTimeline, type StepState, type TimelineRun } from "./run-timeline";

const DOT: Record<StepState, string> = {
  done: "bg-emerald-500 ring-emerald-100",
  current: "bg-sky-500 ring-sky-100 animate-pulse",
  pending: "bg-slate-200 ring-slate-50",
  failed: "bg-red-500 ring-red-100",
};

const STATE_TEXT: Record<StepState, string> = {
  done: "done",
  current: "in progress",
  pending: "not reached",
  failed: "stopped here",
};

/** The run's phases as a vertical timeline (runs:read: the plain progress, no diagnostics). */
export function RunTimelineView({ run }: { run: TimelineRun }) {
  const steps = runTimeline(run);
  return (
    <ol className="space-y-3" data-testid="run-timeline">
      {steps.map((step) => (
        <li key={step.key} className="flex items-start gap-3" data-testid="run-timeline-step" data-state={step.state}>
          <span aria-hidden="true" className={`mt-1 size-2.5 shrink-0 rounded-full ring-4 ${DOT[step.state]}`} />
          <div className="min-w-0 text-sm">
            <p className={step.state === "pending" ? "text-slate-400" : "text-slate-800"}>
              {step.label}
              <span className="sr-only"> ({STATE_TEXT[step.state]})</span>
              {step.at ? (
                <span className="ml-2 text-xs text-slate-500">
                  <Timestamp date={step.at} />
                </span>
              ) : null}
            </p>
            {step.note ? <p className="text-xs text-slate-500">{step.note}</p> : null}
          </div>
        </li>
      ))}
    </ol>
  );
}
