import type { Metadata } from "next";
import Link from "next/link";
import { Timestamp } from "~/components/format/timestamp";
import { issuePath, runPath } from "~/components/nav/paths";
import { DiscardForm } from "~/components/sandboxes/discard-form";
import { remoteSandboxId, remoteStorageNote } from "~/components/sandboxes/remote-storage";
import { sandboxSizeDetail, sandboxSizeText } from "~/components/sandboxes/sandbox-size";
import { AccessDenied } from "~/components/ui/access-denied";
import { EmptyState } from "~/components/ui/empty-state";
import { serverCaller } from "~/trpc/server";
import { pageCall } from "../../../_lib/page-call";

export const metadata: Metadata = { title: "Retained sandboxes" };

/**
 * Every sandbox allocation the company keeps for recovery, oldest first: why
 * it is retained, its run and task, provider, plugin and immutable allocation id, age and size
 * where the provider tells. For runtime managers. Nothing discards one automatically: Discard is
 * explicit (DiscardForm: the allocation id typed, every open action acknowledged, a reason).
 */
export default async function SandboxesPage({ params }: { params: Promise<{ companyId: string }> }) {
  const { companyId } = await params;
  const caller = await serverCaller();
  const result = await pageCall(() => caller.sandboxes.listRetained({ companyId, limit: 200 }));
  if (!result.ok) return <AccessDenied title="Retained sandboxes" message={result.message} />;
  const { items, total } = result.data;

  return (
    <section aria-labelledby="sandboxes-title" className="space-y-5">
      <div className="space-y-1">
        <h1 id="sandboxes-title" className="text-2xl font-semibold tracking-tight">
          Retained sandboxes
        </h1>
        <p className="text-sm text-slate-500">
          Sandboxes kept with their files because recovery may still need them, the oldest first. Nothing discards one
          automatically, and the ordinary cleanup never selects one.
        </p>
      </div>
      {items.length === 0 ? (
        <EmptyState title="No retained sandboxes">No sandbox of this company is kept for recovery.</EmptyState>
      ) : (
        <ol className="card divide-y divide-slate-100" data-testid="sandbox-list">
          {items.map((item) => (
            <li key={item.leaseId} className="space-y-2 px-5 py-4" data-testid="sandbox-row">
              <div className="flex flex-wrap items-center justify-between gap-3">
                <div className="flex min-w-0 items-center gap-2 text-sm">
                  {item.issue ? (
                    <Link href={issuePath(companyId, item.issue.id)} className="font-mono text-xs font-medium text-indigo-700 hover:underline">
                      {item.issue.identifier}
                    </Link>
                  ) : null}
                  {item.issue ? <span className="truncate font-medium text-slate-900">{item.issue.title}</span> : null}
                  {item.runId ? (
                    <Link href={runPath(companyId, item.runId)} className="text-xs text-indigo-700 hover:underline">
                      run ({item.runStatus ?? "unknown"})
                    </Link>
                  ) : null}
                </div>
                <div className="flex shrink-0 items-center gap-3 text-xs text-slate-500">
                  <span>
                    kept since <Timestamp date={item.acquiredAt} />
                  </span>
                  <span title={sandboxSizeDetail(item.size)} data-testid="sandbox-size">
                    {sandboxSizeText(item.size)}
                  </span>
                </div>
              </div>
              <dl className="grid grid-cols-[max-content_1fr] gap-x-3 gap-y-0.5 text-xs text-slate-600">
                <dt className="font-medium text-slate-700">Provider</dt>
                <dd>
                  {item.provider} ({item.pluginId})
                </dd>
                {remoteSandboxId(item.providerLeaseId) ? (
                  <>
                    <dt className="font-medium text-slate-700">Daytona sandbox</dt>
                    <dd className="font-mono">
                      {remoteSandboxId(item.providerLeaseId)}
                      {item.remote ? (
                        <span className="font-sans" data-testid="sandbox-remote-state">
                          {item.remote.kind === "read"
                            ? ` · Daytona says ${item.remote.providerState ?? item.remote.state}, auto-delete ${item.remote.autoDelete ?? "not said"}`
                            : ` · not read (${item.remote.code})`}
                        </span>
                      ) : null}
                    </dd>
                  </>
                ) : null}
                {remoteStorageNote(item.provider, item.size, sandboxSizeText(item.size)) ? (
                  <>
                    <dt className="font-medium text-slate-700">Storage</dt>
                    <dd className="text-amber-700" data-testid="sandbox-remote-storage">
                      {remoteStorageNote(item.provider, item.size, sandboxSizeText(item.size))}
                    </dd>
                  </>
                ) : null}
                <dt className="font-medium text-slate-700">Allocation</dt>
                <dd className="font-mono" data-testid="sandbox-allocation">
                  {item.providerLeaseId ?? "never named by the provider"}
                </dd>
                <dt className="font-medium text-slate-700">Lease</dt>
                <dd className="font-mono">
                  {item.leaseId} · {item.leaseStatus}
                  {/* An unfinished Discard's sandbox may already be gone: never shown as kept with its files. */}
                  {item.discarding ? " · being discarded, files given up" : item.stopped ? " · stopped, files kept" : ""}
                </dd>
              </dl>
              <ul className="list-disc space-y-0.5 pl-5 text-sm text-slate-700" data-testid="sandbox-reasons">
                {item.reasons.map((reason, i) => (
                  <li key={`${reason.kind}-${i}`}>{reason.text}</li>
                ))}
              </ul>
              <DiscardForm
                companyId={companyId}
                leaseId={item.leaseId}
                providerLeaseId={item.providerLeaseId}
                actions={item.reasons.flatMap((r) => (r.actionId && r.cause ? [{ id: r.actionId, cause: r.cause }] : []))}
              />
            </li>
          ))}
        </ol>
      )}
      {total > items.length ? <p className="text-sm text-slate-500">{total - items.length} more not shown.</p> : null}
    </section>
  );
}
