import { formatExact } from "~/components/format/time";

export interface AgentOutputData {
  lines: { seq: number; stream: "stdout" | "stderr"; text: string; at: Date }[];
  totalLines: number;
  truncation: { maxEvents: number; maxBytes: number } | null;
}

/**
 * What the agent itself wrote (stdout and stderr, stderr marked), apart from the controller's run
 * log: the latest lines here, live as the page refreshes, and every kept line in the download.
 */
export function AgentOutputView({ data, downloadHref, running }: { data: AgentOutputData; downloadHref: string; running: boolean }) {
  if (data.totalLines === 0 && !data.truncation) {
    return (
      <p className="mt-2 text-sm text-slate-500" data-testid="agent-output-empty">
        {running ? "The agent has written nothing yet." : "The agent wrote nothing to stdout or stderr."}
      </p>
    );
  }
  const shown = data.lines.length;
  return (
    <div className="mt-2 space-y-2">
      <p className="flex flex-wrap items-baseline gap-x-3 text-xs text-slate-500">
        <span data-testid="agent-output-count">
          {shown < data.totalLines ? `The latest ${shown} of ${data.totalLines} lines.` : `${data.totalLines} ${data.totalLines === 1 ? "line" : "lines"}.`}
        </span>
        <a href={downloadHref} className="text-indigo-700 hover:underline" data-testid="agent-output-download" download>
          Download the whole output
        </a>
      </p>
      {data.truncation ? (
        <p className="text-xs text-amber-800" data-testid="agent-output-truncated">
          The agent wrote more than this run keeps ({data.truncation.maxEvents} lines or {Math.round(data.truncation.maxBytes / 1024)} KiB); later lines were not kept.
        </p>
      ) : null}
      <ol className="max-h-[32rem] overflow-auto rounded bg-slate-950 p-3 font-mono text-xs leading-5" data-testid="agent-output">
        {data.lines.map((line) => (
          <li key={line.seq} className="flex gap-3" data-testid="agent-output-line" data-stream={line.stream}>
            <time dateTime={line.at.toISOString()} className="shrink-0 text-slate-500" title={formatExact(line.at)}>
              {line.at.toISOString().slice(11, 19)}
            </time>
            <span className={`min-w-0 whitespace-pre-wrap break-words ${line.stream === "stderr" ? "text-red-300" : "text-slate-100"}`}>
              {line.stream === "stderr" ? <span className="sr-only">stderr: </span> : null}
              {line.text}
            </span>
          </li>
        ))}
      </ol>
    </div>
  );
}
