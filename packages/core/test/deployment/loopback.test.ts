import { describe, expect, it } from "vitest";
import { LocalModeHostError, assertDeploymentBinding, hostnameOfHostHeader, isLoopbackHost } from "../../src/deployment/loopback";

describe("isLoopbackHost", () => {
  it.each(["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "app.localhost", "::1", "[::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"])(
    "treats %s as loopback",
    (host) => expect(isLoopbackHost(host)).toBe(true),
  );

  it.each(["0.0.0.0", "::", "[::]", "192.168.1.10", "10.0.0.1", "example.com", "localhost.example.com", "128.0.0.1", "::ffff:10.0.0.1", "", "127.0.0.1.nip.io"])(
    "does not treat %j as loopback",
    (host) => expect(isLoopbackHost(host)).toBe(false),
  );
});

describe("hostnameOfHostHeader", () => {
  it("strips the port from names, IPv4 and bracketed IPv6", () => {
    expect(hostnameOfHostHeader("127.0.0.1:3100")).toBe("127.0.0.1");
    expect(hostnameOfHostHeader("localhost")).toBe("localhost");
    expect(hostnameOfHostHeader("[::1]:3100")).toBe("[::1]");
    expect(hostnameOfHostHeader("evil.example:80")).toBe("evil.example");
  });
});

describe("assertDeploymentBinding", () => {
  it("refuses local mode on a non-loopback address, naming the fix", () => {
    expect(() => assertDeploymentBinding("local", "0.0.0.0")).toThrow(LocalModeHostError);
    expect(() => assertDeploymentBinding("local", "192.168.1.10")).toThrow(/COPYBACK_DEPLOYMENT_MODE=authenticated/);
  });

  it("allows local mode on loopback and authenticated mode anywhere", () => {
    expect(() => assertDeploymentBinding("local", "127.0.0.1")).not.toThrow();
    expect(() => assertDeploymentBinding("local", "::1")).not.toThrow();
    expect(() => assertDeploymentBinding("authenticated", "0.0.0.0")).not.toThrow();
  });
});
