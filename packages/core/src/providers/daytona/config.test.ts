import { describe, expect, it } from "vitest";
import { decodeAddress, encodeAddress } from "./address";
import { parseDaytonaConfig } from "./config";
import { readApiKey } from "./credentials";

const refusal = (config: unknown): string => {
  try {
    parseDaytonaConfig(config);
  } catch (error) {
    return `${(error as { code: string }).code}: ${(error as Error).message}`;
  }
  return "accepted";
};

describe("daytona environment config", () => {
  it("defaults to Daytona's cloud, the DAYTONA_API_KEY variable and auto-delete left off", () => {
    expect(parseDaytonaConfig({})).toMatchObject({ apiUrl: "https://app.daytona.io/api", apiKeyEnv: "DAYTONA_API_KEY", labels: {} });
    expect(parseDaytonaConfig({}).autoDeleteMinutes).toBeUndefined();
  });

  it("accepts a full config and keeps unknown keys for other readers", () => {
    const config = parseDaytonaConfig({
      apiUrl: "http://127.0.0.1:4000/api",
      apiKeyEnv: "DAYTONA_KEY_TEAM_A",
      target: "eu",
      image: "debian:12",
      resources: { cpu: 2, memory: 4, disk: 10 },
      labels: { team: "a" },
      autoStopMinutes: 30,
      autoArchiveMinutes: 120,
      autoDeleteMinutes: 1440,
      command: ["agent"],
    });
    expect(config).toMatchObject({ target: "eu", resources: { cpu: 2, memory: 4, disk: 10 }, command: ["agent"] });
  });

  it("refuses a stored key, naming the path and never echoing it", () => {
    const said = refusal({ apiKey: "dtn_0123456789abcdef" });
    expect(said).toMatch(/^provider_config_invalid: .*apiKey: the API key is never stored/);
    expect(said).not.toContain("dtn_0123456789abcdef");
  });

  it("refuses a variable that is not a DAYTONA_ one (another secret of the controller) and an http URL off loopback", () => {
    expect(refusal({ apiKeyEnv: "DATABASE_URL" })).toMatch(/apiKeyEnv/);
    expect(refusal({ apiKeyEnv: "daytona_api_key" })).toMatch(/apiKeyEnv/);
    expect(refusal({ apiUrl: "http://daytona.example.com/api" })).toMatch(/apiUrl: must be an https URL/);
    expect(refusal({ apiUrl: "not a url" })).toMatch(/apiUrl/);
  });

  it("refuses both snapshot and image, resources without an image, reserved labels and bad numbers", () => {
    expect(refusal({ snapshot: "s", image: "i" })).toMatch(/image: give a snapshot or an image, not both/);
    expect(refusal({ snapshot: "s", resources: { cpu: 2 } })).toMatch(/resources: resources apply only/);
    expect(refusal({ labels: { "copyback.lease": "x" } })).toMatch(/labels/);
    expect(refusal({ autoStopMinutes: -1 })).toMatch(/autoStopMinutes/);
    expect(refusal({ image: "i", resources: { gpu: 1 } })).toMatch(/resources/);
    expect(refusal(["not", "an", "object"])).toMatch(/provider_config_invalid/);
  });
});

describe("daytona lease address", () => {
  it("round-trips where a sandbox lives, with nothing secret in it", () => {
    const address = { sandboxId: "0b6e-sbx", apiUrl: "https://app.daytona.io/api", apiKeyEnv: "DAYTONA_API_KEY", target: "us" };
    const id = encodeAddress(address);
    expect(id).toMatch(/^daytona:0b6e-sbx\?/);
    expect(decodeAddress(id)).toEqual(address);
    expect(decodeAddress(encodeAddress({ ...address, target: undefined }))).toEqual({ ...address, target: undefined });
  });

  it("refuses an id that is not one, or that would point a key where no config may", () => {
    for (const bad of ["local-abc", "daytona:x", "daytona:../x?api=https%3A%2F%2Fa&keyEnv=DAYTONA_K", "daytona:x?api=http%3A%2F%2Fevil.example&keyEnv=DAYTONA_K", "daytona:x?api=https%3A%2F%2Fa.b&keyEnv=HOME"]) {
      expect(() => decodeAddress(bad)).toThrow(expect.objectContaining({ code: "provider_lease_id_invalid" }));
    }
  });
});

describe("daytona API key", () => {
  it("is read from the named variable; a missing one names the variable only", () => {
    expect(readApiKey((name) => (name === "DAYTONA_K" ? " key-1 " : undefined), "DAYTONA_K")).toBe("key-1");
    expect(() => readApiKey(() => undefined, "DAYTONA_K")).toThrow(expect.objectContaining({ code: "provider_credentials_missing", message: expect.stringContaining("DAYTONA_K") }));
    expect(() => readApiKey(() => "  ", "DAYTONA_K")).toThrow(expect.objectContaining({ code: "provider_credentials_missing" }));
  });
});
