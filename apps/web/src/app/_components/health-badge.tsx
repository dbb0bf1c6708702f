"use client";

import { useQuery } from "@tanstack/react-query";
import { useSyncExternalStore } from "react";
import { useTRPC } from "~/trpc/react";

const OK_TONE = "bg-emerald-50 text-emerald-700 ring-emerald-200";
const ERROR_TONE = "bg-red-50 text-red-700 ring-red-200";

const noSubscription = () => () => {};

/**
 * Live database status, fetched from the browser through tRPC. The server's HTML (and the
 * hydration render) can only say "checking…", so the query is started once hydrated: building a
 * query observer for it in every server render of every page was CPU spent on nothing.
 */
export function HealthBadge() {
  const hydrated = useSyncExternalStore(noSubscription, () => true, () => false);
  return hydrated ? <FetchedHealthBadge /> : <Badge label="checking…" tone={OK_TONE} />;
}

function FetchedHealthBadge() {
  const trpc = useTRPC();
  const health = useQuery(trpc.health.get.queryOptions(undefined, { refetchInterval: 15_000 }));
  const label = health.isPending ? "checking…" : health.isError ? "database unreachable" : `database ok · ${health.data.database.latencyMs} ms`;
  return <Badge label={label} tone={health.isError ? ERROR_TONE : OK_TONE} />;
}

function Badge({ label, tone }: { label: string; tone: string }) {
  return (
    <span role="status" data-testid="health-badge" className={`rounded-full px-2.5 py-0.5 text-xs ring-1 ${tone}`}>
      {label}
    </span>
  );
}
