import { describe, expect, it } from "vitest";
import { decideNewEnvironment, type NewEnvironmentDecision } from "./new-environment";

const refusal = (d: NewEnvironmentDecision) => (d.kind === "reject" ? { code: d.code, field: d.field } : null);

describe("decideNewEnvironment", () => {
  it("admits a daytona environment with the built-in plugin, the config as given and the default lease policy", () => {
    const d = decideNewEnvironment({ name: "  daytona eu ", provider: "daytona", config: { apiKeyEnv: "DAYTONA_API_KEY", target: "eu" } });
    expect(d).toEqual({
      kind: "admit",
      environment: { name: "daytona eu", provider: "daytona", pluginId: "builtin.daytona", config: { apiKeyEnv: "DAYTONA_API_KEY", target: "eu" }, leasePolicy: "ephemeral" },
    });
  });

  it("admits a local environment without a config ({}) and with a lease policy", () => {
    expect(decideNewEnvironment({ name: "local", provider: "local", leasePolicy: "retain_on_failure" })).toMatchObject({
      kind: "admit",
      environment: { pluginId: "builtin.local", config: {}, leasePolicy: "retain_on_failure" },
    });
  });

  it.each([
    [{ name: "   ", provider: "local" }, "environment_name_invalid", "name"],
    [{ name: "x".repeat(101), provider: "local" }, "environment_name_invalid", "name"],
    [{ name: "two\nlines", provider: "local" }, "environment_name_invalid", "name"],
    [{ name: "e", provider: "kubernetes" }, "provider_unknown", "provider"],
    [{ name: "e", provider: "railway" }, "provider_unsupported", "provider"],
    [{ name: "e", provider: "toString" }, "provider_unknown", "provider"],
    [{ name: "e", provider: "local", config: [1] }, "provider_config_invalid", "config"],
    [{ name: "e", provider: "local", config: { faults: { failExport: 1 } } }, "provider_config_invalid", "config"],
    [{ name: "e", provider: "daytona", config: { apiKeyEnv: "DATABASE_URL" } }, "provider_config_invalid", "config"],
    [{ name: "e", provider: "daytona", config: { snapshot: "a", image: "b" } }, "provider_config_invalid", "config"],
    [{ name: "e", provider: "local", leasePolicy: "forever" }, "lease_policy_invalid", "leasePolicy"],
  ])("refuses %j with %s on %s", (request, code, field) => {
    expect(refusal(decideNewEnvironment(request))).toEqual({ code, field });
  });

  it("refuses a configuration holding a key, naming the field and never the value, for every provider", () => {
    const secret = "dtn_new_env_secret_77";
    for (const [provider, config] of [
      ["daytona", { apiKeyEnv: "DAYTONA_API_KEY", apiKey: secret }],
      ["daytona", { labels: { team: "a" }, nested: { token: secret } }],
      ["local", { env: { OPENAI_API_KEY: secret } }],
    ] as const) {
      const d = decideNewEnvironment({ name: "e", provider, config });
      expect(d.kind === "reject" && d.code).toBe("provider_config_holds_key");
      expect(JSON.stringify(d)).not.toContain(secret);
    }
    const daytona = decideNewEnvironment({ name: "e", provider: "daytona", config: { apiKey: secret } });
    expect(daytona.kind === "reject" && daytona.message).toMatch(/apiKey.*apiKeyEnv/);
  });
});
