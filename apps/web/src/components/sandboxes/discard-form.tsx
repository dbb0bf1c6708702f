"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { userMessageOf } from "~/components/ui/error-message";
import { useTRPC } from "~/trpc/react";

interface Props {
  companyId: string;
  leaseId: string;
  providerLeaseId: string | null;
  /** The open recovery actions that still need the files: each must be acknowledged. */
  actions: readonly { id: string; cause: string }[];
}

/**
 * Discard of one retained sandbox. Explicit on purpose: the operator types
 * the allocation id shown above (verified against the lease), ticks every open recovery action
 * that still needs the files (each records that they were given up) and says why.
 */
export function DiscardForm({ companyId, leaseId, providerLeaseId, actions }: Props) {
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [allocation, setAllocation] = useState("");
  const [acknowledged, setAcknowledged] = useState<ReadonlySet<string>>(new Set());
  const [reason, setReason] = useState("");
  const discard = useMutation(trpc.sandboxes.discard.mutationOptions({ onSuccess: () => router.refresh() }));
  if (providerLeaseId === null) return <p className="text-xs text-slate-500">The provider never named this allocation: it cannot be verified, so it cannot be discarded here.</p>;
  if (!open) {
    return (
      <button type="button" className="btn btn-secondary text-xs" onClick={() => setOpen(true)} data-testid="sandbox-discard-open">
        Discard…
      </button>
    );
  }
  const ready = allocation === providerLeaseId && actions.every((a) => acknowledged.has(a.id)) && reason.trim() !== "";
  return (
    <form
      className="space-y-2 rounded-md border border-red-200 bg-red-50 p-3 text-sm"
      data-testid="sandbox-discard-form"
      onSubmit={(event) => {
        event.preventDefault();
        discard.mutate({ companyId, leaseId, providerLeaseId: allocation, acknowledgedActionIds: [...acknowledged], reason });
      }}
    >
      <p className="font-medium text-red-900">Discarding destroys this sandbox and every file in it. It cannot be undone.</p>
      <label className="block text-xs text-slate-700">
        Type the allocation id <span className="font-mono">{providerLeaseId}</span> to confirm
        <input className="field mt-1 w-full font-mono" value={allocation} onChange={(e) => setAllocation(e.target.value)} data-testid="sandbox-discard-allocation" />
      </label>
      {actions.length > 0 ? (
        <fieldset className="space-y-1">
          <legend className="text-xs text-slate-700">These open recovery actions still need its files; each will record that they were given up:</legend>
          {actions.map((a) => (
            <label key={a.id} className="flex items-center gap-2 text-xs">
              <input
                type="checkbox"
                checked={acknowledged.has(a.id)}
                onChange={(e) => {
                  const next = new Set(acknowledged);
                  if (e.target.checked) next.add(a.id);
                  else next.delete(a.id);
                  setAcknowledged(next);
                }}
              />
              <span className="font-mono">{a.id}</span> ({a.cause})
            </label>
          ))}
        </fieldset>
      ) : null}
      <label className="block text-xs text-slate-700">
        Why are the files given up?
        <textarea className="field mt-1 w-full" rows={2} value={reason} onChange={(e) => setReason(e.target.value)} data-testid="sandbox-discard-reason" />
      </label>
      <div className="flex gap-2">
        <button type="submit" className="btn bg-red-700 text-xs text-white hover:bg-red-800 disabled:opacity-50" disabled={!ready || discard.isPending} data-testid="sandbox-discard-submit">
          {discard.isPending ? "Discarding…" : "Discard sandbox"}
        </button>
        <button type="button" className="btn btn-secondary text-xs" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      {discard.error ? (
        <p role="alert" className="text-xs text-red-800">
          {userMessageOf(discard.error)}
        </p>
      ) : null}
    </form>
  );
}
