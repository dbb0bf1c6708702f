// Controller platforms (R-RW-*): detection from a process's environment, the identity its owner
// receipts record, the harness endpoint's wire format, and the stop receipt with its verifier.
export { CONTROLLER_PLATFORMS, detectControllerPlatform, type ControllerPlatform, type PlatformDetection } from "../platforms/controller-platform";
export {
  controllerPlatformIdentity,
  platformProofOf,
  RAILWAY_PLATFORM,
  railwayIdentity,
  sameIdentity,
  type ControllerPlatformIdentity,
  type PlatformProof,
  type RailwayIdentity,
  identityInWords,
  WORKER_CGROUP_PLATFORM,
  workerCgroupIdentity,
  type WorkerCgroupIdentity,
} from "../platforms/platform-identity";
export {
  WORKER_CGROUP_HARNESS,
  WORKER_CGROUP_VARIABLE,
  workerCgroupDetection,
  workerCgroupPlatform,
  workerCgroupSetting,
} from "../platforms/worker-cgroup-platform";
export { RAILWAY_HARNESS, RAILWAY_VARIABLES, railwayEnvShape, railwayPlatform } from "../platforms/railway-platform";
export { firstDuplicateKey } from "../platforms/json-duplicate-keys";
export {
  STOP_RECEIPT_AUDIENCE,
  STOP_RECEIPT_DEFAULT_TTL_SECONDS,
  STOP_RECEIPT_ISSUER,
  STOP_RECEIPT_MAX_BYTES,
  STOP_RECEIPT_MAX_LIFETIME_SECONDS,
  STOP_RECEIPT_TYPE,
  stopReceiptClaims,
  type StopReceiptClaims,
} from "../platforms/stop-receipt";
export {
  HARNESS_REFUSAL_CODES,
  WORKER_STOP_MAX_REQUEST_BYTES,
  WORKER_STOP_PATH,
  workerStopRequest,
  workerStopResponse,
  type HarnessRefusalCode,
  type WorkerStopRequest,
  type WorkerStopResponse,
} from "../platforms/stop-request";
export {
  harnessPublicKeys,
  importHarnessKeys,
  verifyStopReceipt,
  type HarnessKeySet,
  type ReceiptExpectation,
  type ReceiptRefusalCode,
  type ReceiptVerdict,
} from "../platforms/verify-stop-receipt";
