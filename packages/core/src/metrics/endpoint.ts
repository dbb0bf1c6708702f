// One scrape body for the worker's metrics listener and the console's /api/metrics: this
// process's counters and histograms (definitions.ts) plus the database gauges computed on scrape.
import { Registry } from "prom-client";
import type { PrismaClient } from "@copyback/db/client";
import { createDatabaseGaugeRegistry } from "./database-gauges";
import { processRegistry } from "./definitions";

export interface MetricsEndpoint {
  readonly contentType: string;
  /** The Prometheus text exposition of every metric. */
  render(): Promise<string>;
}

export function createMetricsEndpoint(opts: { db?: Pick<PrismaClient, "$queryRaw"> }): MetricsEndpoint {
  const registry = opts.db ? Registry.merge([processRegistry, createDatabaseGaugeRegistry(opts.db)]) : processRegistry;
  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
  };
}
