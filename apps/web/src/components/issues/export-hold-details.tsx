import { Timestamp } from "~/components/format/timestamp";
import { FinalizationAttempts } from "~/components/runs/finalization-attempts";
import type { ExportHold } from "~/server/routers/recovery/export-hold";

/**
 * Recovery details of an export hold (runtime:manage only; the server sends nothing to others):
 * the run, lease, provider allocation and stopped-provider receipt the operator verifies first,
 * each finalization attempt, and for the exhausted hold the exact export-only retry call (REST and
 * CLI); for the copyback-failed hold (R-EX-4, R-UI-2) what failed, whether host writes began, the
 * conflicts and its resolution path (the resolve call: restored with the stop receipt, or a
 * disposition). Read-only: nothing here calls the API.
 */
export function ExportHoldDetails({ hold }: { hold: ExportHold }) {
  return (
    <div className="space-y-3" data-testid="export-hold-details" data-kind={hold.kind}>
      <dl className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-2">
        {hold.run ? (
          <Field label="Run status">
            {hold.run.status}
            {hold.run.errorCode ? (
              <>
                {" "}
                <code className="font-mono text-xs" data-testid="export-hold-run-error">
                  {hold.run.errorCode}
                </code>
              </>
            ) : null}
            {hold.run.attempt !== null ? ` (attempt ${hold.run.attempt})` : null}
          </Field>
        ) : null}
        {hold.lease ? (
          <>
            <Field label="Lease">
              <code className="font-mono text-xs break-all">{hold.lease.id}</code> ({hold.lease.status}, {hold.lease.policy})
            </Field>
            <Field label="Provider allocation">
              <code className="font-mono text-xs break-all" data-testid="export-hold-allocation">
                {hold.lease.providerLeaseId ?? "none recorded"}
              </code>{" "}
              on <code className="font-mono text-xs">{hold.lease.pluginId}</code>
            </Field>
          </>
        ) : (
          <Field label="Lease">None recorded</Field>
        )}
        <Field label="Stopped-provider receipt">
          {hold.stoppedReceipt ? (
            <span data-testid="export-hold-receipt">
              Stopped <Timestamp date={new Date(hold.stoppedReceipt.stoppedAt)} /> by <code className="font-mono text-xs">{hold.stoppedReceipt.method}</code> (request{" "}
              <code className="font-mono text-xs break-all">{hold.stoppedReceipt.requestId}</code>)
            </span>
          ) : (
            <span data-testid="export-hold-receipt-missing">
              Not confirmed yet{hold.lease?.stopPending ? ": the cleanup sweep retries the verified stop" : ""}. Do not repair before a confirmed receipt shows here.
            </span>
          )}
        </Field>
        {hold.limit ? (
          <Field label="Limit crossed">
            <code className="font-mono text-xs">{hold.limit.violation}</code>
            {hold.limit.limit ? (
              <>
                {" "}
                (<code className="font-mono text-xs">{hold.limit.limit}</code>
                {hold.limit.max !== null ? ` = ${hold.limit.max}` : ""})
              </>
            ) : null}
            {hold.limit.path ? (
              <>
                {" "}
                at <code className="font-mono text-xs break-all">{hold.limit.path}</code>
              </>
            ) : null}
          </Field>
        ) : null}
        {hold.copybackFailure ? (
          <>
            <Field label="What failed">
              <span data-testid="copyback-failure">{hold.copybackFailure.failureInWords}</span>{" "}
              <code className="font-mono text-xs">{hold.copybackFailure.failureCode}</code>
              {hold.copybackFailure.bindingReason ? (
                <>
                  {" "}
                  (<code className="font-mono text-xs">{hold.copybackFailure.bindingReason}</code>)
                </>
              ) : null}
            </Field>
            <Field label="Host writes began">
              <span data-testid="copyback-host-writes">{hold.copybackFailure.hostWritesStarted ? "Yes: the host workspace may hold some or all of the run's files" : "No: the host workspace was not written"}</span>
            </Field>
          </>
        ) : null}
      </dl>
      {hold.copybackFailure && hold.copybackFailure.conflictCount !== null ? (
        <div data-testid="copyback-conflicts">
          <p className="text-xs font-medium uppercase tracking-wide text-slate-500">
            Conflicts ({hold.copybackFailure.conflictCount}
            {hold.copybackFailure.conflictCount > hold.copybackFailure.conflicts.length ? `, the first ${hold.copybackFailure.conflicts.length} shown` : ""})
          </p>
          <ul className="mt-1 space-y-0.5 text-sm text-slate-800">
            {hold.copybackFailure.conflicts.map((conflict) => (
              <li key={conflict.path}>
                <code className="font-mono text-xs break-all">{conflict.path}</code> <span className="text-xs text-slate-500">({conflict.kind})</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <div>
        <p className="text-xs font-medium uppercase tracking-wide text-slate-500">Finalization attempts</p>
        <FinalizationAttempts attempts={hold.attempts} />
      </div>
      {hold.retryCall ? (
        <div className="space-y-3" data-testid="export-retry-guidance">
          <p className="text-sm text-slate-700">
            Verify the company, run, allocation and receipt above, keep that exact sandbox (no replacement, nothing seeded over it), restore the provider&apos;s
            transport without touching its files, then request the export-only retry with a key that holds <code className="font-mono text-xs">runtime:manage</code>. The same
            run commits its saved result; no agent turn starts.
          </p>
          <Snippet label="API call" testId="export-retry-api-call" text={hold.retryCall.curl} />
          <Snippet label="Or with the CLI" testId="export-retry-cli" text={hold.retryCall.cli} />
        </div>
      ) : null}
      {hold.resolveCall ? (
        <div className="space-y-3" data-testid="copyback-resolve-guidance">
          <p className="text-sm text-slate-700">
            Inspect the retained sandbox, copy what matters to the host workspace (or confirm there is nothing to keep), and once the stopped-provider receipt above is confirmed
            record it as <code className="font-mono text-xs">restored</code> (the form below, or with a key that holds <code className="font-mono text-xs">runtime:manage</code>). Or
            close it deliberately as <code className="font-mono text-xs">false_positive</code> or <code className="font-mono text-xs">cancelled</code>, with a note. The task and
            the run stay as they are; no agent turn starts.
          </p>
          <Snippet label="API call" testId="copyback-resolve-api-call" text={hold.resolveCall.curl} />
          <Snippet label="Or with the CLI" testId="copyback-resolve-cli" text={hold.resolveCall.cli} />
          <Snippet label="A deliberate disposition" testId="copyback-disposition-cli" text={hold.resolveCall.dispositionCli} />
        </div>
      ) : null}
    </div>
  );
}

function Snippet({ label, text, testId }: { label: string; text: string; testId: string }) {
  return (
    <div>
      <p className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</p>
      <pre className="mt-1 overflow-x-auto rounded-md bg-slate-900 p-3 font-mono text-xs text-slate-100 select-all" data-testid={testId}>
        {text}
      </pre>
    </div>
  );
}

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</dt>
      <dd className="mt-0.5 text-slate-800">{children}</dd>
    </div>
  );
}
