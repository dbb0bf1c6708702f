import Link from "next/link";
import { Timestamp } from "~/components/format/timestamp";
import { runPath } from "~/components/nav/paths";
import { ExportHoldDetails } from "./export-hold-details";
import { FileRecoveryForm, fileRecoveryChoices } from "./file-recovery-form";
import { PackReverifyForm } from "./pack-reverify-form";
import { ReconstructionOfferPanel, type ReconstructionOffer } from "./reconstruction-form";
import type { TaskRecovery } from "./use-task-recovery";

type Details = NonNullable<TaskRecovery["details"]>;

/**
 * The task view's recovery notice, derived in one place (core's deriveTaskNotice):
 *   - nothing while the task's work needs no recovery;
 *   - "Restoring saved work…" once an operator's attestation queued the recovery, until the
 *     committed copyback resolves it (R-UI-1);
 *   - otherwise a compact operator-attention notice with "Inspect run" (R-UI-2).
 * Recovery details (a disclosure) appear only when the server sent them (`runtime:manage`), and
 * the API call and SQL inside only for `runtime:confirm_owner_stop`. The notice is read-only for
 * everyone (R-UI-1, R-UI-5): no process id, host name, shutdown form or resume control, and
 * nothing here calls the API. The one exception is "Continue from saved sources" (R-UI-3): its
 * offer is passed in only for `runtime:manage` viewers and exists only after the exact sandbox's
 * confirmed destruction (R-RC-1), so everyone else's notice stays exactly as it was.
 */
export function RecoveryNotice({
  companyId,
  issueId,
  recovery,
  reconstruction = null,
}: {
  companyId: string;
  issueId?: string;
  recovery: TaskRecovery | null;
  reconstruction?: ReconstructionOffer | null;
}) {
  if (!recovery || recovery.notice.kind === "none") return null;
  const { notice, details } = recovery;
  // R-UI-3: only with Recovery details (runtime:manage) and the server's offer.
  const offer =
    issueId && details && reconstruction ? <ReconstructionOfferPanel companyId={companyId} issueId={issueId} offer={reconstruction} /> : null;

  if (notice.kind === "restoring") {
    return (
      <section
        aria-label="Recovery"
        className="card space-y-3 border-l-4 border-l-indigo-400 p-4"
        data-testid="recovery-notice"
        data-kind="restoring"
      >
        <p role="status" className="flex items-center gap-2 text-sm font-medium text-slate-800">
          <span aria-hidden="true" className="size-2 animate-pulse rounded-full bg-indigo-500" />
          {notice.message}
        </p>
        {notice.waiting ? (
          <p className="text-sm text-slate-700" data-testid="recovery-notice-waiting">
            {notice.waiting}
          </p>
        ) : null}
        {offer}
        {details ? <RecoveryDetails companyId={companyId} issueId={issueId} details={details} /> : null}
      </section>
    );
  }

  return (
    <section
      aria-labelledby="recovery-notice-title"
      className="card space-y-3 border-l-4 border-l-amber-400 p-4"
      data-testid="recovery-notice"
      data-kind="attention"
    >
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0 space-y-1">
          <h2 id="recovery-notice-title" className="text-sm font-semibold text-amber-900">
            Needs an operator
          </h2>
          <p className="text-sm text-slate-700" data-testid="recovery-notice-message">
            {notice.message}
          </p>
        </div>
        {notice.runId ? (
          <Link
            href={runPath(companyId, notice.runId)}
            className="shrink-0 text-sm font-medium text-indigo-700 hover:underline"
            data-testid="recovery-notice-run-link"
          >
            Inspect run
          </Link>
        ) : null}
      </div>
      {offer}
      {details ? <RecoveryDetails companyId={companyId} issueId={issueId} details={details} /> : null}
    </section>
  );
}

function RecoveryDetails({ companyId, issueId, details }: { companyId: string; issueId: string | undefined; details: Details }) {
  // R-UI-4: the file-recovery form, for board operators (only they receive details and sources).
  const choices = fileRecoveryChoices(details);
  return (
    <details className="group rounded-md bg-slate-50 px-3 py-2" data-testid="recovery-details">
      <summary className="cursor-pointer text-sm font-medium text-slate-700">Recovery details</summary>
      <ul className="mt-3 space-y-4">
        {details.map((action) => (
          <li key={action.actionId} className="space-y-3" data-testid="recovery-action">
            <dl className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-2">
              <Field label="Cause">
                {action.causeInWords} <code className="font-mono text-xs text-slate-500">{action.cause}</code>
              </Field>
              <Field label="Open since">
                <Timestamp date={action.createdAt} /> ({action.status})
              </Field>
              {action.reasonInWords ? <Field label="Why">{action.reasonInWords}</Field> : null}
              {action.phaseInWords ? <Field label="Phase when held">{action.phaseInWords}</Field> : null}
              <Field label="Action">
                <code className="font-mono text-xs break-all">{action.actionId}</code>
              </Field>
              {action.runId ? (
                <Field label="Run">
                  <code className="font-mono text-xs break-all">{action.runId}</code>
                </Field>
              ) : null}
              <Field label="Leases">
                {action.leaseIds.length === 0 ? (
                  "None"
                ) : (
                  <code className="font-mono text-xs break-all">{action.leaseIds.join(", ")}</code>
                )}
              </Field>
              {action.deferral ? (
                <Field label="Continuing waits on">
                  <code className="font-mono text-xs text-slate-500">{action.deferral.code}</code> since{" "}
                  <Timestamp date={action.deferral.since} /> (last seen <Timestamp date={action.deferral.lastSeenAt} />)
                </Field>
              ) : null}
              {action.stopProof ? (
                <Field label="Automatic stop proof">
                  Not yet: {action.stopProof.codeInWords}{" "}
                  <code className="font-mono text-xs text-slate-500">({action.stopProof.code})</code>, checked{" "}
                  <Timestamp date={action.stopProof.checkedAt} />
                </Field>
              ) : null}
              {action.attestedAt ? (
                <Field label="Stop attested">
                  <Timestamp date={action.attestedAt} />; the copyback of the same run resumes.
                </Field>
              ) : null}
            </dl>
            {action.nextAction ? (
              <div>
                <p className="text-xs font-medium uppercase tracking-wide text-slate-500">Next action</p>
                <p className="mt-0.5 text-sm text-slate-700">{action.nextAction}</p>
              </div>
            ) : null}
            {action.operator ? <OperatorGuidance operator={action.operator} /> : null}
            {action.exportHold ? <ExportHoldDetails hold={action.exportHold} /> : null}
            {issueId && action.packHold ? <PackReverifyForm companyId={companyId} issueId={issueId} actionId={action.actionId} hold={action.packHold} /> : null}
          </li>
        ))}
      </ul>
      {issueId && choices.length > 0 ? (
        <div className="mt-4">
          <FileRecoveryForm companyId={companyId} issueId={issueId} choices={choices} />
        </div>
      ) : null}
    </details>
  );
}

function OperatorGuidance({ operator }: { operator: NonNullable<Details[number]["operator"]> }) {
  if (operator.ownerToken === null || !operator.apiCall || !operator.maintenanceSql) {
    return (
      <p className="text-sm text-slate-700" data-testid="recovery-operator-guidance">
        The run&apos;s owner record cannot be read, so no attestation can name it. Inspect the run before doing anything else.
      </p>
    );
  }
  return (
    <div className="space-y-3" data-testid="recovery-operator-guidance">
      <p className="text-sm text-slate-700">
        First verify through the deployment platform that the recorded controller <strong>and its copyback subprocesses</strong>{" "}
        have stopped. Then record that evidence with an owner&apos;s or administrator&apos;s board key:
      </p>
      <Field label="Owner token">
        <code className="font-mono text-xs break-all" data-testid="recovery-owner-token">
          {operator.ownerToken}
        </code>
      </Field>
      <Snippet label="API call" testId="recovery-api-call" text={operator.apiCall.curl} />
      <Snippet
        label="Maintenance fallback (servers without this API): one database transaction"
        testId="recovery-maintenance-sql"
        text={operator.maintenanceSql}
      />
    </div>
  );
}

function Snippet({ label, text, testId }: { label: string; text: string; testId: string }) {
  return (
    <div>
      <p className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</p>
      <pre
        className="mt-1 overflow-x-auto rounded-md bg-slate-900 p-3 font-mono text-xs text-slate-100 select-all"
        data-testid={testId}
      >
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
