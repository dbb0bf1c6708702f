export {
  resolveDatabase,
  type ResolveDatabaseOptions,
  type ResolvedDatabase,
} from "./resolve-database";
export { defaultInstanceRoot, instanceRootFrom, embeddedPortFrom } from "./instance-root";
export { DatabaseConnectionError, type DatabaseConnectionErrorCode } from "./errors";
export { probeDatabase } from "./probe-database";
export {
  parseDatabaseUrl,
  describeTarget,
  redactPassword,
  type DatabaseTarget,
} from "./database-url";
