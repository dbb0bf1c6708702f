// Prometheus: who may read the console's metrics, the exposition parser, the scrape endpoint.
export { decideMetricsAccess } from "../metrics/access";
export { setLiveConnectionSource } from "../metrics/definitions";
export { parseExposition, type Sample, sampleSum } from "../metrics/exposition";
export { createMetricsEndpoint, type MetricsEndpoint } from "../monitoring/endpoint";
