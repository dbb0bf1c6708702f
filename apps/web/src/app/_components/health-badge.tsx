"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "~/trpc/react";

/** Live database status, fetched from the browser through tRPC. */
export function HealthBadge() {
  const trpc = useTRPC();
  const health = useQuery(trpc.health.get.queryOptions(undefined, { refetchInterval: 15_000 }));
  const label = health.isPending ? "checking…" : health.isError ? "database unreachable" : `database ok · ${health.data.database.latencyMs} ms`;
  const tone = health.isError ? "bg-red-50 text-red-700 ring-red-200" : "bg-emerald-50 text-emerald-700 ring-emerald-200";
  return (
    <span role="status" data-testid="health-badge" className={`rounded-full px-2.5 py-0.5 text-xs ring-1 ${tone}`}>
      {label}
    </span>
  );
}
