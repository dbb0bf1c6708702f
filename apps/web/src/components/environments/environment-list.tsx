// One environment list of the Environments page: provider, plugin, default lease policy, the key
// variable's state (Daytona) and the configuration as validated. Rendered from the server's answer
// (core's environmentsView); nothing here reads a key or the raw configuration. Issue 21: the last
// dispatch refused for the key (no run is dispatched while it is missing or rejected) and, for
// Daytona, the newest sandbox's Daytona id with a link to Daytona's dashboard.
import type { RouterOutputs } from "~/components/trpc-types";

export type Environment = RouterOutputs["environments"]["list"]["items"][number];

// Daytona's own meaning of 0 differs per interval, so each says it.
const minutes = (value: number | null, unset: string, zero: string) => (value === null ? unset : value === 0 ? `0 (${zero})` : `${value} min`);

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
    ["Auto-stop", minutes(config.autoStopMinutes, "Daytona's default", "never stopped for idleness")],
    ["Auto-archive", minutes(config.autoArchiveMinutes, "Daytona's default", "Daytona's maximum")],
    ["Auto-delete", minutes(config.autoDeleteMinutes, "never", "as soon as it stops; copyback disables it before a stop that keeps files")],
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

export function EnvironmentList({ items, companyId, agents = [] }: { items: Environment[]; companyId: string; agents?: ReadonlyArray<{ id: string; name: string; environmentId: string | null }> }) {
  return (
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
              Key variable {item.credential.variable}: {item.credential.text} (as the console&apos;s environment has it)
            </p>
          ) : null}
          {item.lastCredentialRefusal ? (
            <p className="text-xs text-rose-700" data-testid="environment-credential-refusal">
              No run is dispatched while the key is missing or rejected. Last refused {new Date(item.lastCredentialRefusal.at).toISOString()} ({item.lastCredentialRefusal.code}): {item.lastCredentialRefusal.message}{" "}
              <a className="underline" href={`/companies/${companyId}/runs/${item.lastCredentialRefusal.runId}`}>
                the refused run
              </a>
            </p>
          ) : null}
          {item.sandbox ? (
            <p className="text-xs text-slate-600" data-testid="environment-sandbox">
              Newest sandbox: Daytona id <span className="font-mono">{item.sandbox.sandboxId}</span>, {item.sandbox.status} (as copyback recorded it)
              {item.sandbox.dashboardUrl ? (
                <>
                  {" · "}
                  <a className="underline" href={item.sandbox.dashboardUrl} target="_blank" rel="noreferrer">
                    open Daytona&apos;s dashboard
                  </a>{" "}
                  (find the id in its sandbox list)
                </>
              ) : null}
              {" · "}
              <span data-testid="environment-sandbox-live">
                {item.sandbox.live.kind === "read"
                  ? `Daytona says: ${item.sandbox.live.providerState ?? item.sandbox.live.state}, auto-delete ${item.sandbox.live.autoDelete ?? "not said"}${item.sandbox.live.autoDeleteMinutes !== null ? ` (${item.sandbox.live.autoDeleteMinutes} min)` : ""}`
                  : `Daytona not read (${item.sandbox.live.code}): ${item.sandbox.live.message}`}
              </span>
            </p>
          ) : null}
          <p className="text-xs text-slate-600" data-testid="environment-agents">
            {agentsIn(agents, item.id)}
          </p>
          <Configuration configuration={item.configuration} />
        </li>
      ))}
    </ol>
  );
}

/** Issue 21 part 5: which agents' runs are dispatched here. */
function agentsIn(agents: ReadonlyArray<{ name: string; environmentId: string | null }>, environmentId: string): string {
  const names = agents.filter((a) => a.environmentId === environmentId).map((a) => a.name);
  return names.length === 0 ? "No agent runs here." : `Agents that run here: ${names.join(", ")}.`;
}
