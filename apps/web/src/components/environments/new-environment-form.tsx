"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { userMessageOf } from "~/components/ui/error-message";
import { useTRPC } from "~/trpc/react";

interface Props {
  companyId: string;
  /** The providers an environment can be created with here (core's CREATABLE_PROVIDERS). */
  providers: readonly string[];
  /** The lease policies, the default first (the schema's enum). */
  leasePolicies: readonly string[];
}

/** What the configuration box suggests per provider: every key a name or a setting, never a key's value. */
const EXAMPLES: Record<string, string> = {
  daytona: '{"apiKeyEnv": "DAYTONA_API_KEY", "target": "eu", "autoStopMinutes": 60}',
  local: "{}",
  fake: "{}",
};

/**
 * "New environment": the same core service as `copyback environment create`. The server checks
 * the configuration with the provider's own schema and refuses one holding a key; a refusal is
 * shown as the server wrote it (it names fields, never their values) and nothing is created.
 */
export function NewEnvironmentForm({ companyId, providers, leasePolicies }: Props) {
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [provider, setProvider] = useState(providers.includes("daytona") ? "daytona" : (providers[0] ?? ""));
  const [name, setName] = useState("");
  const [config, setConfig] = useState("");
  const [leasePolicy, setLeasePolicy] = useState(leasePolicies[0] ?? "ephemeral");
  const create = useMutation(trpc.environments.create.mutationOptions({ onSuccess: () => router.refresh() }));

  if (!open) {
    return (
      <div className="space-y-2">
        <button type="button" className="btn btn-secondary text-sm" onClick={() => setOpen(true)} data-testid="environment-new-open">
          New environment…
        </button>
        {create.data ? <CreatedNote created={create.data} /> : null}
      </div>
    );
  }
  return (
    <form
      className="card space-y-3 p-4 text-sm"
      data-testid="environment-new-form"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate({ companyId, name, provider, config, leasePolicy }, { onSuccess: () => { setOpen(false); setName(""); setConfig(""); } });
      }}
    >
      <h2 className="font-medium text-slate-900">New environment</h2>
      <div className="grid gap-3 sm:grid-cols-3">
        <label className="block text-xs text-slate-700">
          Provider
          <select className="field mt-1 w-full" value={provider} onChange={(e) => setProvider(e.target.value)} data-testid="environment-new-provider">
            {providers.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label className="block text-xs text-slate-700">
          Name (unique in the company)
          <input className="field mt-1 w-full" value={name} onChange={(e) => setName(e.target.value)} data-testid="environment-new-name" />
        </label>
        <label className="block text-xs text-slate-700">
          Lease policy
          <select className="field mt-1 w-full" value={leasePolicy} onChange={(e) => setLeasePolicy(e.target.value)} data-testid="environment-new-lease-policy">
            {leasePolicies.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label className="block text-xs text-slate-700">
        Configuration (JSON; empty for the provider&apos;s defaults)
        <textarea
          className="field mt-1 w-full font-mono"
          rows={4}
          spellCheck={false}
          placeholder={EXAMPLES[provider] ?? "{}"}
          value={config}
          onChange={(e) => setConfig(e.target.value)}
          data-testid="environment-new-config"
        />
      </label>
      <p className="text-xs text-slate-500">
        A key is never stored in an environment.{" "}
        {provider === "daytona"
          ? "Put the NAME of the variable that holds the Daytona key in apiKeyEnv (default DAYTONA_API_KEY, or another name starting with DAYTONA_), and set that variable in the worker's environment."
          : "The configuration is checked by the provider's own schema before anything is written."}
      </p>
      <div className="flex gap-2">
        <button type="submit" className="btn btn-primary text-xs disabled:opacity-50" disabled={name.trim() === "" || create.isPending} data-testid="environment-new-submit">
          {create.isPending ? "Creating…" : "Create environment"}
        </button>
        <button type="button" className="btn btn-secondary text-xs" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      {create.error ? (
        <p role="alert" className="rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-xs text-amber-900" data-testid="environment-new-error">
          Nothing was created. {userMessageOf(create.error)}
        </p>
      ) : null}
    </form>
  );
}

function CreatedNote({ created }: { created: { name: string; provider: string; credential: { variable: string; text: string } | null } }) {
  return (
    <p className="text-xs text-emerald-800" role="status" data-testid="environment-new-created">
      Created {created.name} ({created.provider}).
      {created.credential ? ` Key variable ${created.credential.variable}: ${created.credential.text} (as the console's environment has it; the worker's is what counts).` : ""} Point an agent at it below.
    </p>
  );
}
