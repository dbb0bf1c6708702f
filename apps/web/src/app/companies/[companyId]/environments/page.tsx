import type { Metadata } from "next";
import { AccessDenied } from "~/components/ui/access-denied";
import { EmptyState } from "~/components/ui/empty-state";
import { serverCaller } from "~/trpc/server";
import type { RouterOutputs } from "~/components/trpc-types";
import { pageCall } from "../../../_lib/page-call";

export const metadata: Metadata = { title: "Environments" };

type Environment = RouterOutputs["environments"]["list"]["items"][number];

const minutes = (value: number | null, unset: string) => (value === null ? unset : value === 0 ? "0 (off)" : `${value} min`);

/** A Daytona environment's configuration as validated: never a key, only its variable's name. */
function DaytonaConfiguration({ config }: { config: Extract<Environment["configuration"], { kind: "daytona" }> }) {
  const source = config.source.kind === "default" ? "Daytona's default snapshot" : `${config.source.kind} ${config.source.name}`;
  const resources = config.resources
    ? [config.resources.cpu !== null ? `${config.resources.cpu} CPU` : null, config.resources.memoryGiB !== null ? `${config.resources.memoryGiB} GiB memory` : null, config.resources.diskGiB !== null ? `${config.resources.diskGiB} GiB disk` : null]
        .filter(Boolean)
        .join(", ")
    : "Daytona's defaults";
  const rows: Array<[string, string]> = [
    ["API URL", config.apiUrl],
    ["Target", config.target ?? "Daytona's default"],
    ["Created from", source],
    ["Resources", resources],
    ["Labels", config.labels.length === 0 ? "none" : config.labels.map((l) => `${l.key}=${l.value}`).join(", ")],
    ["Auto-stop", minutes(config.autoStopMinutes, "Daytona's default")],
    ["Auto-archive", minutes(config.autoArchiveMinutes, "Daytona's default")],
    ["Auto-delete", minutes(config.autoDeleteMinutes, "never")],
    ["Key variable", config.apiKeyEnv],
  ];
  return (
    <dl className="grid grid-cols-[max-content_1fr] gap-x-3 gap-y-0.5 text-xs text-slate-600" data-testid="environment-config">
      {rows.map(([label, value]) => (
        <div key={label} className="contents">
          <dt className="font-medium text-slate-700">{label}</dt>
          <dd className="font-mono">{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Configuration({ configuration }: { configuration: Environment["configuration"] }) {
  switch (configuration.kind) {
    case "daytona":
      return <DaytonaConfiguration config={configuration} />;
    case "settings":
      return configuration.entries.length === 0 ? (
        <p className="text-xs text-slate-500">No settings.</p>
      ) : (
        <dl className="grid grid-cols-[max-content_1fr] gap-x-3 gap-y-0.5 text-xs text-slate-600" data-testid="environment-config">
          {configuration.entries.map((entry) => (
            <div key={entry.key} className="contents">
              <dt className="font-medium text-slate-700">{entry.key}</dt>
              <dd className="break-all font-mono">{entry.value}</dd>
            </div>
          ))}
        </dl>
      );
    default:
      return (
        <p className={configuration.kind === "unsupported" ? "text-xs text-slate-500" : "text-xs text-rose-700"} data-testid="environment-config-problem">
          {configuration.text}
        </p>
      );
  }
}

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
        <ol className="card divide-y divide-slate-100" data-testid="environment-list">
          {items.map((item) => (
            <li key={item.id} className="space-y-2 px-5 py-4" data-testid="environment-row">
              <div className="flex flex-wrap items-center justify-between gap-3">
                <span className="font-medium text-slate-900">{item.name}</span>
                <span className="text-xs text-slate-500">
                  {item.provider} ({item.pluginId}) · default lease policy {item.defaultLeasePolicy}
                </span>
              </div>
              {item.credential ? (
                <p className={item.credential.set ? "text-xs text-emerald-700" : "text-xs text-amber-700"} data-testid="environment-key">
                  Key variable {item.credential.variable}: {item.credential.text} (in the console&apos;s environment)
                </p>
              ) : null}
              <Configuration configuration={item.configuration} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
