"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import type { RouterOutputs } from "~/components/trpc-types";
import { EmptyState } from "~/components/ui/empty-state";
import { userMessageOf } from "~/components/ui/error-message";
import { useTRPC } from "~/trpc/react";
import { EXPIRY_OPTIONS, KeyTable, expiresInDaysFrom, type KeyRow } from "./key-table";
import { NewSecret } from "./new-secret";

interface Props {
  companyId: string;
  keys: RouterOutputs["apiKeys"]["list"];
  /** Local board only: the active members a key can act as. */
  members: Array<{ id: string; label: string }> | null;
  signedInWithKey: boolean;
}

/** Board API keys: for scripts and E2E suites, acting with one member's role in this company. */
export function BoardKeys({ companyId, keys, members, signedInWithKey }: Props) {
  const trpc = useTRPC();
  const router = useRouter();
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const create = useMutation(
    trpc.apiKeys.create.mutationOptions({
      onSuccess: (result) => {
        setCreated({ name: result.key.name, secret: result.secret });
        formRef.current?.reset();
        router.refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.apiKeys.revoke.mutationOptions({ onSuccess: () => router.refresh() }));
  const rows: KeyRow[] = keys.map((key) => ({ ...key, owner: { label: key.user.name, detail: key.user.email } }));

  return (
    <section aria-labelledby="board-keys-title" className="space-y-4">
      <div>
        <h2 id="board-keys-title" className="text-lg font-semibold tracking-tight">Board API keys</h2>
        <p className="mt-1 text-sm text-slate-600">For scripts and test suites. A key acts with its member&apos;s role in this company only, and stops working if that member is suspended.</p>
      </div>
      {created ? <NewSecret name={created.name} secret={created.secret} onDismiss={() => setCreated(null)} /> : null}
      {signedInWithKey ? (
        <p className="text-sm text-slate-600">Sign in to the console to create keys: an API key cannot create other keys.</p>
      ) : (
        <form
          ref={formRef}
          className="card flex flex-wrap items-end gap-3 px-4 py-4"
          aria-label="Create a board API key"
          onSubmit={(event) => {
            event.preventDefault();
            const data = new FormData(event.currentTarget);
            create.mutate({
              companyId,
              name: String(data.get("name") ?? ""),
              expiresInDays: expiresInDaysFrom(String(data.get("expires") ?? "")),
              ...(members ? { userId: String(data.get("userId") ?? "") } : {}),
            });
          }}
        >
          <div className="flex min-w-48 flex-1 flex-col gap-1">
            <label htmlFor="board-key-name" className="text-sm font-medium text-slate-800">Name</label>
            <input id="board-key-name" name="name" required maxLength={100} placeholder="e.g. Nightly E2E suite" className="field" />
          </div>
          {members ? (
            <div className="flex flex-col gap-1">
              <label htmlFor="board-key-user" className="text-sm font-medium text-slate-800">Acts as</label>
              <select id="board-key-user" name="userId" required className="field">
                {members.map((m) => (
                  <option key={m.id} value={m.id}>{m.label}</option>
                ))}
              </select>
            </div>
          ) : null}
          <div className="flex flex-col gap-1">
            <label htmlFor="board-key-expires" className="text-sm font-medium text-slate-800">Expires</label>
            <select id="board-key-expires" name="expires" defaultValue="90" className="field">
              {EXPIRY_OPTIONS.map((o) => (
                <option key={o.value} value={o.value}>{o.label}</option>
              ))}
            </select>
          </div>
          <button type="submit" className="btn btn-primary" disabled={create.isPending}>
            {create.isPending ? "Creating…" : "Create key"}
          </button>
          <p role="alert" className="basis-full text-sm text-red-700">{create.error ? userMessageOf(create.error) : null}</p>
        </form>
      )}
      {rows.length === 0 ? (
        <EmptyState title="No board API keys yet" />
      ) : (
        <KeyTable
          caption="Board API keys of this company"
          ownerHeading="Acts as"
          rows={rows}
          revokingId={revoke.isPending ? (revoke.variables?.keyId ?? null) : null}
          onRevoke={(row) => {
            if (window.confirm(`Revoke the key “${row.name}”? Anything using it stops working immediately.`)) revoke.mutate({ companyId, keyId: row.id });
          }}
        />
      )}
      <p role="alert" className="text-sm text-red-700">{revoke.error ? userMessageOf(revoke.error) : null}</p>
    </section>
  );
}
