import { describe, expect, it } from "vitest";
import { environmentView, environmentsView, isKeyLikeField, keyLikeFields, type EnvironmentRow } from "./environment-view";

const row = (over: Partial<EnvironmentRow>): EnvironmentRow => ({ id: "e1", name: "env", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "ephemeral", config: {}, ...over });
const noEnv = () => undefined;

describe("environmentView", () => {
  it("shows a daytona environment's validated configuration and the NAME of its key variable, set or not", () => {
    const config = {
      apiUrl: "https://daytona.example/api",
      apiKeyEnv: "DAYTONA_TEAM_KEY",
      target: "eu",
      image: "node:22",
      resources: { cpu: 2, memory: 4 },
      labels: { team: "core", cost: "r-and-d" },
      autoStopMinutes: 15,
    };
    const secret = "dtn_live_0123456789abcdef";
    const set = environmentView(row({ provider: "daytona", pluginId: "builtin.daytona", config }), (name) => (name === "DAYTONA_TEAM_KEY" ? secret : undefined));
    expect(set.configuration).toEqual({
      kind: "daytona",
      apiUrl: "https://daytona.example/api",
      target: "eu",
      source: { kind: "image", name: "node:22" },
      resources: { cpu: 2, memoryGiB: 4, diskGiB: null },
      labels: [{ key: "cost", value: "r-and-d" }, { key: "team", value: "core" }],
      autoStopMinutes: 15,
      autoArchiveMinutes: null,
      autoDeleteMinutes: null,
      apiKeyEnv: "DAYTONA_TEAM_KEY",
    });
    expect(set.credential).toEqual({ variable: "DAYTONA_TEAM_KEY", set: true, text: "set" });
    // The key's value never reaches the view.
    expect(JSON.stringify(set)).not.toContain(secret);

    const unset = environmentView(row({ provider: "daytona", pluginId: "builtin.daytona", config: {} }), noEnv);
    expect(unset.configuration).toMatchObject({ kind: "daytona", apiUrl: "https://app.daytona.io/api", source: { kind: "default" }, apiKeyEnv: "DAYTONA_API_KEY", labels: [] });
    expect(unset.credential).toEqual({ variable: "DAYTONA_API_KEY", set: false, text: "not set: set DAYTONA_API_KEY in the worker's environment" });
    // A blank value is not a key.
    expect(environmentView(row({ provider: "daytona", config: {} }), () => "  ").credential?.set).toBe(false);
  });

  it("never echoes a configuration holding a key-like field, whatever the provider, naming only its path", () => {
    const secret = "sk-please-never-show-me";
    const cases: EnvironmentRow[] = [
      row({ provider: "daytona", config: { apiKey: secret } }),
      row({ provider: "daytona", config: { apiKeyEnv: "DAYTONA_API_KEY", password: secret } }),
      row({ provider: "local", config: { allowNetwork: true, nested: { accessToken: secret } } }),
      row({ provider: "fake", config: { turn: { files: { "notes.txt": "x" } }, extras: [{ client_secret: secret }] } }),
      row({ provider: "railway", pluginId: "builtin.railway", config: { RAILWAY_TOKEN: secret } }),
    ];
    const views = environmentsView(cases, () => secret);
    expect(views.map((v) => v.configuration.kind)).toEqual(["withheld", "withheld", "withheld", "withheld", "withheld"]);
    expect(views.map((v) => (v.configuration.kind === "withheld" ? v.configuration.fields : []))).toEqual([["apiKey"], ["password"], ["nested.accessToken"], ["extras.0.client_secret"], ["RAILWAY_TOKEN"]]);
    for (const view of views) expect(JSON.stringify(view)).not.toContain(secret);
    // A daytona config that still validates names its variable (not its value) beside the withheld config.
    expect(views[1]!.credential).toEqual({ variable: "DAYTONA_API_KEY", set: true, text: "set" });
  });

  it("shows an invalid configuration as 'invalid configuration: <zod message>', never its values", () => {
    const view = environmentView(row({ provider: "daytona", config: { apiUrl: "http://evil.example/api", snapshot: "s", image: "i" } }), noEnv);
    expect(view.configuration).toEqual({
      kind: "invalid",
      text: "invalid configuration: apiUrl: must be an https URL (http only on a loopback host); image: give a snapshot or an image, not both",
    });
    expect(JSON.stringify(view)).not.toContain("evil.example");
    // No variable is named from a config that did not validate.
    expect(view.credential).toBeNull();

    const local = environmentView(row({ config: { allowNetwork: "yes-please" } }), noEnv);
    expect(local.configuration.kind).toBe("invalid");
    expect(local.configuration).toMatchObject({ text: expect.stringMatching(/^invalid configuration: allowNetwork: /) });
    expect(JSON.stringify(local)).not.toContain("yes-please");

    expect(environmentView(row({ config: [1, 2] }), noEnv).configuration).toEqual({ kind: "invalid", text: "invalid configuration: config: must be a JSON object" });
  });

  it("shows a local environment's settings as validated, defaults applied, and cuts long values", () => {
    const view = environmentView(row({ config: { allowNetwork: true } }), noEnv);
    expect(view).toMatchObject({ id: "e1", name: "env", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "ephemeral", credential: null });
    if (view.configuration.kind !== "settings") throw new Error(`expected settings, got ${view.configuration.kind}`);
    expect(view.configuration.entries.map((e) => e.key)).toEqual(["allowNetwork", "limits"]);
    expect(view.configuration.entries[0]).toEqual({ key: "allowNetwork", value: "true" });

    const long = environmentView(row({ provider: "fake", pluginId: "builtin.fake", config: { turn: { files: { "big.txt": "x".repeat(5000) } } } }), noEnv);
    if (long.configuration.kind !== "settings") throw new Error("expected settings");
    expect(long.configuration.entries[0]!.value.length).toBeLessThan(260);
    expect(long.configuration.entries[0]!.value).toMatch(/characters\)$/);
  });

  it("does not show a configuration no built-in provider reads", () => {
    expect(environmentView(row({ provider: "railway", config: { service: "x" } }), noEnv).configuration).toMatchObject({ kind: "unsupported" });
  });
});

describe("key-like fields", () => {
  it("catches the usual spellings of a secret and lets a variable's name through", () => {
    for (const field of ["apiKey", "api_key", "API-KEY", "key", "token", "jwtToken", "accessToken", "clientSecret", "password", "privateKey", "Authorization", "credentials"]) {
      expect(isKeyLikeField(field), field).toBe(true);
    }
    for (const field of ["apiKeyEnv", "apiUrl", "target", "snapshot", "labels", "autoStopMinutes", "limits", "allowNetwork", "faults", "turn"]) {
      expect(isKeyLikeField(field), field).toBe(false);
    }
    expect(keyLikeFields({ a: { b: [{ token: 1 }] }, apiKeyEnv: "DAYTONA_X" })).toEqual(["a.b.0.token"]);
  });
});
