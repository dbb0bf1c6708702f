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
  keys: RouterOutputs["agentKeys"]["list"];
  agents: Array<{ id: string; name: string }>;
  signedInWithKey: boolean;
}

/** Agent API keys: an agent uses its key only for its own runs (e.g. submitting a run's result). */
export function AgentKeys({ companyId, keys, agents, signedInWithKey }: Props) {
  const trpc = useTRPC();
  const router = useRouter();
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const create = useMutation(
    trpc.agentKeys.create.mutationOptions({
      onSuccess: (result) => {
        setCreated({ name: result.key.name, secret: result.secret });
        formRef.current?.reset();
        router.refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.agentKeys.revoke.mutationOptions({ onSuccess: () => router.refresh() }));
  const rows: KeyRow[] = keys.map((key) => ({ ...key, owner: { label: key.agent.name } }));

  return (
    <section aria-labelledby="agent-keys-title" className="space-y-4">
      <div>
        <h2 id="agent-keys-title" className="text-lg font-semibold tracking-tight">Agent API keys</h2>
        <p className="mt-1 text-sm text-slate-600">An agent&apos;s key can only act on that agent&apos;s own runs, such as submitting a run&apos;s result.</p>
      </div>
      {created ? <NewSecret name={created.name} secret={created.secret} onDismiss={() => setCreated(null)} /> : null}
      {signedInWithKey ? null : agents.length === 0 ? (
        <p className="text-sm text-slate-600">This company has no active agents to create keys for.</p>
      ) : (
        <form
          ref={formRef}
          className="card flex flex-wrap items-end gap-3 px-4 py-4"
          aria-label="Create an agent API key"
          onSubmit={(event) => {
            event.preventDefault();
            const data = new FormData(event.currentTarget);
            create.mutate({
              companyId,
              agentId: String(data.get("agentId") ?? ""),
              name: String(data.get("name") ?? ""),
              expiresInDays: expiresInDaysFrom(String(data.get("expires") ?? "")),
            });
          }}
        >
          <div className="flex flex-col gap-1">
            <label htmlFor="agent-key-agent" className="text-sm font-medium text-slate-800">Agent</label>
            <select id="agent-key-agent" name="agentId" required className="field">
              {agents.map((agent) => (
                <option key={agent.id} value={agent.id}>{agent.name}</option>
              ))}
            </select>
          </div>
          <div className="flex min-w-48 flex-1 flex-col gap-1">
            <label htmlFor="agent-key-name" className="text-sm font-medium text-slate-800">Name</label>
            <input id="agent-key-name" name="name" required maxLength={100} placeholder="e.g. Sandbox runner" className="field" />
          </div>
          <div className="flex flex-col gap-1">
            <label htmlFor="agent-key-expires" className="text-sm font-medium text-slate-800">Expires</label>
            <select id="agent-key-expires" name="expires" defaultValue="" className="field">
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
        <EmptyState title="No agent API keys yet" />
      ) : (
        <KeyTable
          caption="Agent API keys of this company"
          ownerHeading="Agent"
          rows={rows}
          revokingId={revoke.isPending ? (revoke.variables?.keyId ?? null) : null}
          onRevoke={(row) => {
            if (window.confirm(`Revoke the key “${row.name}”? The agent using it stops being able to call the API immediately.`)) revoke.mutate({ companyId, keyId: row.id });
          }}
        />
      )}
      <p role="alert" className="text-sm text-red-700">{revoke.error ? userMessageOf(revoke.error) : null}</p>
    </section>
  );
}
