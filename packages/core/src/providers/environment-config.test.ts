import { describe, expect, it } from "vitest";
import { nextEnvironmentConfig, refuseStoredKeys, validateEnvironmentConfig } from "./environment-config";

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
};

describe("environment configuration changes", () => {
  it("sets the local rehearsal fault and keeps every other key", () => {
    const next = nextEnvironmentConfig("local", { allowNetwork: true, command: ["node"] }, { kind: "faults", faults: { failExports: 9 } });
    expect(next).toEqual({ allowNetwork: true, command: ["node"], faults: { failExports: 9 } });
  });

  it("removes the faults with null and leaves the rest", () => {
    expect(nextEnvironmentConfig("fake", { faults: { probeFailure: 1 }, turn: {} }, { kind: "faults", faults: null })).toEqual({ turn: {} });
  });

  it("refuses a misspelled fault with its path", () => {
    const code = codeOf(() => nextEnvironmentConfig("local", {}, { kind: "faults", faults: { failExport: 3 } }));
    expect(code).toBe("provider_config_invalid");
    expect(() => nextEnvironmentConfig("local", {}, { kind: "faults", faults: { failExport: 3 } })).toThrow(/faults/);
  });

  it("refuses a configuration that is not an object, and providers this instance cannot check", () => {
    expect(codeOf(() => validateEnvironmentConfig("local", [1]))).toBe("provider_config_invalid");
    expect(codeOf(() => nextEnvironmentConfig("fake", {}, { kind: "replace", config: "x" }))).toBe("provider_config_invalid");
    expect(codeOf(() => validateEnvironmentConfig("railway", {}))).toBe("provider_config_unsupported");
  });

  it("checks a daytona configuration with its own schema, naming the path and never keeping a key", () => {
    expect(() => validateEnvironmentConfig("daytona", { apiKeyEnv: "DAYTONA_KEY_EU", target: "eu", labels: { team: "a" } })).not.toThrow();
    expect(codeOf(() => validateEnvironmentConfig("daytona", { apiKeyEnv: "DATABASE_URL" }))).toBe("provider_config_invalid");
    expect(() => validateEnvironmentConfig("daytona", { apiKey: "dtn_secret_value" })).toThrow(/apiKey: the API key is never stored/);
    expect(() => validateEnvironmentConfig("daytona", { apiKey: "dtn_secret_value" })).not.toThrow(/dtn_secret_value/);
  });

  it("refuses a key in any provider's configuration, however deep, on every change (one rule with environment create)", () => {
    expect(codeOf(() => nextEnvironmentConfig("local", {}, { kind: "replace", config: { env: { GITHUB_TOKEN: "x" } } }))).toBe("provider_config_holds_key");
    expect(codeOf(() => nextEnvironmentConfig("fake", {}, { kind: "replace", config: { turn: { password: "x" } } }))).toBe("provider_config_holds_key");
    expect(codeOf(() => nextEnvironmentConfig("daytona", { apiKeyEnv: "DAYTONA_KEY_EU" }, { kind: "replace", config: { apiKeyEnv: "DAYTONA_KEY_EU", apiKey: "x" } }))).toBe("provider_config_holds_key");
    // A stored configuration that already holds one is refused at its next change, also of its faults alone.
    expect(codeOf(() => nextEnvironmentConfig("local", { env: { SECRET: "x" } }, { kind: "faults", faults: { failExports: 1 } }))).toBe("provider_config_holds_key");
    expect(() => refuseStoredKeys("daytona", { apiKey: "dtn_value" })).toThrow(/remove apiKey\. Put the NAME/);
    expect(() => refuseStoredKeys("local", { apiKey: "dtn_value" })).not.toThrow(/dtn_value/);
    // The variable's NAME is not a key.
    expect(() => refuseStoredKeys("daytona", { apiKeyEnv: "DAYTONA_KEY_EU" })).not.toThrow();
  });

  it("replaces the whole configuration when asked", () => {
    expect(nextEnvironmentConfig("fake", { faults: { probeFailure: 1 } }, { kind: "replace", config: { turn: {} } })).toEqual({ turn: {} });
  });
});
