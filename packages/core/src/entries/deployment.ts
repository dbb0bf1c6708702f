// The one definition of "this machine" for local mode: the launcher's bind, the Host check.
export {
  assertDeploymentBinding,
  hostnameOfHostHeader,
  isLoopbackHost,
} from "../deployment/loopback";
