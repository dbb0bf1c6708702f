export {
  startEmbeddedPostgres,
  type EmbeddedDatabase,
  type StartEmbeddedPostgresOptions,
} from "./start";
export {
  EmbeddedPostgresError,
  isEmbeddedPostgresError,
  type EmbeddedPostgresErrorCode,
} from "./errors";
export { DEFAULT_EMBEDDED_PORT, APP_DATABASE, instanceLayout, type InstanceLayout } from "./layout";
export {
  superviseEmbeddedPostgres,
  restartDelayMs,
  DEFAULT_RESTART_BACKOFF,
  type SupervisedDatabase,
  type SuperviseOptions,
  type RestartBackoff,
} from "./supervise";
export { SERVER_TRAVERSE_BIT } from "./access";
