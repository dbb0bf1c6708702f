// The one definition of "this machine" for local mode: the launcher's bind, the Host check.
export {
  assertDeploymentBinding,
  hostnameOfHostHeader,
  isLoopbackHost,
} from "../deployment/loopback";
// Issue 23: the host identity that binds host-local work (workspaces, local sandboxes, locks).
export { HOST_ID_FILE, parseHostId, resolveHostId, type ResolvedHostId } from "../deployment/host-id";
