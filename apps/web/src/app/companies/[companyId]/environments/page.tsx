import type { Metadata } from "next";
import { AccessDenied } from "~/components/ui/access-denied";
import { EmptyState } from "~/components/ui/empty-state";
import { serverCaller } from "~/trpc/server";
import { CREATABLE_PROVIDERS, LEASE_POLICIES } from "@copyback/core/environments";
import { AgentEnvironmentForm } from "~/components/environments/agent-environment-form";
import { EnvironmentList } from "~/components/environments/environment-list";
import { NewEnvironmentForm } from "~/components/environments/new-environment-form";
import { companyPermissions } from "../../../_lib/company";
import { pageCall } from "../../../_lib/page-call";

export const metadata: Metadata = { title: "Environments" };

/**
 * The company's environments, for runtime managers: provider, plugin, default lease policy, the
 * configuration as the provider validates it and the agents that run in each. For Daytona, whether
 * the key's variable is set, as this console's process sees it: the worker reads its own
 * environment when a run starts, and that is what counts (the text says so). Owners and
 * administrators (environments:manage) also create environments and choose each agent's here.
 */
export default async function EnvironmentsPage({ params }: { params: Promise<{ companyId: string }> }) {
  const { companyId } = await params;
  const caller = await serverCaller();
  const result = await pageCall(() => caller.environments.list({ companyId }));
  if (!result.ok) return <AccessDenied title="Environments" message={result.message} />;
  const { items, agents } = result.data;
  const canManage = (await companyPermissions(companyId)).has("environments:manage");
  // The default policy first: the form preselects it.
  const leasePolicies = ["ephemeral", ...LEASE_POLICIES.filter((p) => p !== "ephemeral")];

  return (
    <section aria-labelledby="environments-title" className="space-y-5">
      <div className="space-y-1">
        <h1 id="environments-title" className="text-2xl font-semibold tracking-tight">
          Environments
        </h1>
        <p className="text-sm text-slate-500">
          Where this company&apos;s agents run, with each configuration as its provider validates it. A key is never stored
          or shown: a Daytona environment names the variable that holds it. Whether that variable is set is checked in the
          console&apos;s own process environment; the worker&apos;s own environment is what counts when a run starts.
        </p>
      </div>
      {canManage ? <NewEnvironmentForm companyId={companyId} providers={CREATABLE_PROVIDERS} leasePolicies={leasePolicies} /> : null}
      {items.length === 0 ? (
        <EmptyState title="No environments">This company has no environment yet.</EmptyState>
      ) : (
        <EnvironmentList items={items} companyId={companyId} agents={agents} />
      )}
      {canManage ? <AgentEnvironmentForm companyId={companyId} agents={agents} environments={items} /> : null}
    </section>
  );
}
