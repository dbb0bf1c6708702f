// One scrape body for the worker's metrics listener and the console's /api/metrics: this
// process's counters and histograms (definitions.ts) plus the database gauges computed on scrape.
import { Registry } from "prom-client";
import type { PrismaClient } from "@copyback/db/client";
import { createDatabaseGauges } from "./database-gauges";
import { processRegistry } from "../metrics/definitions";

export interface MetricsEndpoint {
  readonly contentType: string;
  /** The Prometheus text exposition of every metric. */
  render(): Promise<string>;
}

export function createMetricsEndpoint(opts: { db?: Pick<PrismaClient, "$queryRaw"> }): MetricsEndpoint {
  const gauges = opts.db ? createDatabaseGauges(opts.db) : null;
  const registry = gauges ? Registry.merge([processRegistry, gauges.registry]) : processRegistry;
  return {
    contentType: registry.contentType,
    // Every scrape reads the database afresh (one snapshot shared by its gauges).
    render: () => {
      gauges?.refresh();
      return registry.metrics();
    },
  };
}
