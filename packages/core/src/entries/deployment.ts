// The one definition of "this machine" for local mode: the launcher's bind, the Host check.
export {
  assertDeploymentBinding,
  hostnameOfHostHeader,
  isLoopbackHost,
} from "../deployment/loopback";
// Issue 23: the host identity that binds host-local work (workspaces, local sandboxes, locks).
export { HOST_ID_FILE, parseHostId, resolveHostId, type ResolvedHostId } from "../deployment/host-id";
// Issue 23: each worker's heartbeat (worker_hosts) and the runs that wait for a host without a live worker.
export {
  HOST_WORKER_GONE_CODE,
  WAITING_FOR_HOST_CODE,
  WORKER_HEARTBEAT_INTERVAL_MS,
  WORKER_STALE_AFTER_MS,
  hostAlive,
  hostServing,
  hostWaitOf,
  hostWorkerGoneMessage,
  waitingForHostMessage,
  workerLive,
  type HostBeats,
  type HostWait,
  type HostWaitCode,
} from "../deployment/worker-host-liveness";
export { beatWorkerHost, countRunHostWaitsPerHost, countRunsWaitingPerHost, readRunHostWait, readRunHostWaits, removeWorkerHost, type WorkerHostRow } from "../deployment/worker-hosts";
