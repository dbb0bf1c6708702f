// The metrics scrape endpoint and the database gauges it computes on scrape: a shell over the
// whole engine, so nothing below it imports it (packages/core/README.md).
export * from "./database-gauges";
export * from "./endpoint";
