import { Timestamp } from "~/components/format/timestamp";
import type { RouterOutputs } from "~/components/trpc-types";
import { EmptyState } from "~/components/ui/empty-state";
import { FinalizationAttempts } from "./finalization-attempts";
import { IsolationNote } from "./isolation-note";

type Finalization = RouterOutputs["runs"]["finalization"];

const PHASE_LABEL: Record<NonNullable<Finalization["coordinator"]>["phase"], string> = {
  observed: "Observed",
  result_accepted: "Result accepted",
  workspace_finalizing: "Finalizing workspace",
  arbitrating: "Arbitrating status",
  committed: "Committed",
  retryable_failure: "Retryable failure",
  terminal_failure: "Terminal failure",
};

const OPERATION_LABEL: Record<Finalization["workspaceOperations"][number]["phase"], string> = {
  workspace_prepare: "Prepare",
  workspace_restore: "Restore",
  workspace_finalize: "Finalize (copyback)",
};

const POLICY_LABEL: Record<Finalization["leases"][number]["policy"], string> = {
  ephemeral: "Ephemeral",
  reuse_by_environment: "Reuse by environment",
  retain_on_failure: "Retain on failure",
};

const LEASE_STATUS_LABEL: Record<Finalization["leases"][number]["status"], string> = {
  active: "Active",
  released: "Released",
  pending_cleanup: "Pending cleanup",
  destroyed: "Destroyed",
  failed: "Failed",
};

/** Operator diagnostics of a run's native finalization (rendered only for runtime:manage). */
export function FinalizationDetails({ data }: { data: Finalization }) {
  const { coordinator, workspaceOperations, leases, attempts } = data;
  return (
    <div className="space-y-5">
      {coordinator ? (
        <dl
          className="grid gap-x-6 gap-y-3 text-sm sm:grid-cols-3"
          data-testid="finalization-coordinator"
        >
          <Field label="Coordinator phase">{PHASE_LABEL[coordinator.phase]}</Field>
          <Field label="Attempt">{coordinator.attempt}</Field>
          <Field label="Failure code">
            {coordinator.failureCode ? (
              <code className="font-mono text-xs">{coordinator.failureCode}</code>
            ) : (
              "None"
            )}
          </Field>
          {coordinator.nextAttemptAt ? (
            <Field label="Next attempt">
              <Timestamp date={coordinator.nextAttemptAt} />
            </Field>
          ) : null}
          {coordinator.committedAt ? (
            <Field label="Committed">
              <Timestamp date={coordinator.committedAt} />
            </Field>
          ) : null}
          <Field label="Updated">
            <Timestamp date={coordinator.updatedAt} />
          </Field>
        </dl>
      ) : (
        <EmptyState title="No finalization coordinator">
          This run has not been through native finalization.
        </EmptyState>
      )}

      {coordinator ? (
        <div>
          <h3 className="text-xs font-medium uppercase tracking-wide text-slate-500">Finalization attempts</h3>
          <FinalizationAttempts attempts={attempts} />
        </div>
      ) : null}

      <div>
        <h3 className="text-xs font-medium uppercase tracking-wide text-slate-500">
          Workspace operations
        </h3>
        {workspaceOperations.length === 0 ? (
          <p className="mt-2 text-sm text-slate-500">
            No workspace operations recorded for this run.
          </p>
        ) : (
          <table className="mt-2 w-full text-left text-sm" data-testid="workspace-operations">
            <thead className="text-xs text-slate-500">
              <tr>
                <th scope="col" className="py-1.5 pr-4 font-medium">
                  Operation
                </th>
                <th scope="col" className="py-1.5 pr-4 font-medium">
                  Status
                </th>
                <th scope="col" className="py-1.5 pr-4 font-medium">
                  Error code
                </th>
                <th scope="col" className="py-1.5 pr-4 font-medium">
                  Changes
                </th>
                <th scope="col" className="py-1.5 pr-4 font-medium">
                  Started
                </th>
                <th scope="col" className="py-1.5 font-medium">
                  Finished
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {workspaceOperations.map((operation) => (
                <tr key={operation.id}>
                  <td className="py-2 pr-4">{OPERATION_LABEL[operation.phase]}</td>
                  <td className="py-2 pr-4 capitalize">{operation.status}</td>
                  <td className="py-2 pr-4">
                    {operation.errorCode ? (
                      <code className="font-mono text-xs">{operation.errorCode}</code>
                    ) : (
                      "—"
                    )}
                  </td>
                  <td className="py-2 pr-4 text-slate-600" data-testid="operation-changes">
                    {operation.changes ? describeChanges(operation.changes) : "—"}
                  </td>
                  <td className="py-2 pr-4 text-slate-600">
                    <Timestamp date={operation.startedAt} />
                  </td>
                  <td className="py-2 text-slate-600">
                    {operation.finishedAt ? <Timestamp date={operation.finishedAt} /> : "—"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>

      <div data-testid="run-leases">
        <h3 className="text-xs font-medium uppercase tracking-wide text-slate-500">Environment lease</h3>
        {leases.length === 0 ? (
          <p className="mt-2 text-sm text-slate-500">No environment lease for this run.</p>
        ) : (
          <ul className="mt-2 space-y-3">
            {leases.map((lease) => (
              <li key={lease.id} className="space-y-2" data-testid="run-lease">
                <dl className="grid gap-x-6 gap-y-3 text-sm sm:grid-cols-3">
                  <Field label="Provider">
                    <span className="capitalize">{lease.provider}</span>
                  </Field>
                  <Field label="Plugin">
                    <code className="font-mono text-xs">{lease.pluginId}</code>
                  </Field>
                  <Field label="Policy">{POLICY_LABEL[lease.policy]}</Field>
                  <Field label="Status">{LEASE_STATUS_LABEL[lease.status]}</Field>
                  <Field label="Acquired">
                    <Timestamp date={lease.acquiredAt} />
                  </Field>
                  <Field label="Released">{lease.releasedAt ? <Timestamp date={lease.releasedAt} /> : "—"}</Field>
                </dl>
                <IsolationNote isolated={lease.isolated} reason={lease.isolationReason} />
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</dt>
      <dd className="mt-0.5 text-slate-800">{children}</dd>
    </div>
  );
}

function describeChanges(changes: NonNullable<Finalization["workspaceOperations"][number]["changes"]>): string {
  if (changes.omitted) return "Export omitted";
  if (changes.unchanged) return "No changes";
  return `${changes.written} written, ${changes.deleted} deleted`;
}
