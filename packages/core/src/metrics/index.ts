// Prometheus metrics: definitions, observers, the exposition parser and who may read the
// console's. The database gauges and the scrape endpoint are a shell above the engine
// (monitoring/); the provider instrumentation lives with the providers.
export * from "./definitions";
export * from "./observe";
export * from "./access";
export * from "./exposition";
