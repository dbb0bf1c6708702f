// Prometheus metrics (issue 14 section 2): definitions, observers, the database gauges, one
// scrape endpoint and who may read the console's.
export * from "./definitions";
export * from "./observe";
export * from "./database-gauges";
export * from "./endpoint";
export * from "./access";
export * from "./instrument-provider";
export * from "./exposition";
