import type { Metadata } from "next";
import { AccessDenied } from "~/components/ui/access-denied";
import { EmptyState } from "~/components/ui/empty-state";
import { serverCaller } from "~/trpc/server";
import { EnvironmentList } from "~/components/environments/environment-list";
import { pageCall } from "../../../_lib/page-call";

export const metadata: Metadata = { title: "Environments" };

/**
 * The company's environments, read-only, for runtime managers: provider, plugin, default lease
 * policy and the configuration as the provider validates it. For Daytona, whether the key's
 * variable is set, as this console's process sees it: the worker reads its own environment when
 * a run starts, and that is what counts (the text says so).
 */
export default async function EnvironmentsPage({ params }: { params: Promise<{ companyId: string }> }) {
  const { companyId } = await params;
  const caller = await serverCaller();
  const result = await pageCall(() => caller.environments.list({ companyId }));
  if (!result.ok) return <AccessDenied title="Environments" message={result.message} />;
  const { items } = result.data;

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
      {items.length === 0 ? (
        <EmptyState title="No environments">This company has no environment yet.</EmptyState>
      ) : (
        <EnvironmentList items={items} companyId={companyId} />
      )}
    </section>
  );
}
