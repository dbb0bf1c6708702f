// Local deployment mode trusts whoever reaches the console as the board (the spec's "trusted
// local board"), so it may only ever be reachable from this machine. This is the one definition
// of "this machine" used by the launcher (bind address) and the web app (Host header).
import net from "node:net";

/**
 * Is `host` (a bind address or a Host header's hostname, without port) a loopback name?
 * `localhost`, the whole 127.0.0.0/8 block and `::1` are; `0.0.0.0`, `::` and every other
 * address or name are not. IPv6 may come bracketed (`[::1]`), as in URLs and Host headers.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (net.isIPv4(name)) return name.startsWith("127.");
  if (net.isIPv6(name)) return isIPv6Loopback(name);
  return false;
}

function isIPv6Loopback(address: string): boolean {
  if (address === "::1") return true;
  // An IPv4-mapped loopback such as ::ffff:127.0.0.1.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped?.[1]) return net.isIPv4(mapped[1]) && mapped[1].startsWith("127.");
  // The long forms of ::1 (0:0:0:0:0:0:0:1 and zero-padded variants).
  const groups = address.split(":");
  return groups.length === 8 && groups.slice(0, 7).every((g) => /^0{1,4}$/.test(g)) && /^0{0,3}1$/.test(groups[7] ?? "");
}

/** The hostname of a Host header value (`example.com:3100`, `[::1]:3100`), without the port. */
export function hostnameOfHostHeader(hostHeader: string): string {
  const value = hostHeader.trim();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    return end === -1 ? value : value.slice(0, end + 1);
  }
  const colon = value.lastIndexOf(":");
  // A bare IPv6 address without brackets has several colons and no port to strip.
  return colon !== -1 && value.indexOf(":") === colon ? value.slice(0, colon) : value;
}

export class LocalModeHostError extends Error {
  constructor(host: string) {
    super(
      `Local mode trusts every visitor as the board and only binds to loopback; COPYBACK_HOST=${host} is not a loopback address. ` +
        "Use COPYBACK_HOST=127.0.0.1, or COPYBACK_DEPLOYMENT_MODE=authenticated to serve other machines.",
    );
    this.name = "LocalModeHostError";
  }
}

/** Refuses to start local mode on a non-loopback bind address. */
export function assertDeploymentBinding(mode: "local" | "authenticated", host: string): void {
  if (mode === "local" && !isLoopbackHost(host)) throw new LocalModeHostError(host);
}
