import { describe, expect, it } from "vitest";
import { encodeAddress } from "./address";
import { daytonaDashboardLink } from "./dashboard";

describe("daytonaDashboardLink", () => {
  it("links a Daytona cloud sandbox to the dashboard's sandbox list on the API's origin, with its id", () => {
    const id = encodeAddress({ sandboxId: "sbx-123", apiUrl: "https://app.daytona.io/api", apiKeyEnv: "DAYTONA_API_KEY", target: "eu" });
    expect(daytonaDashboardLink(id)).toEqual({ sandboxId: "sbx-123", url: "https://app.daytona.io/dashboard/sandboxes" });
    const selfHosted = encodeAddress({ sandboxId: "s1", apiUrl: "https://daytona.example.com/api", apiKeyEnv: "DAYTONA_K" });
    expect(daytonaDashboardLink(selfHosted)?.url).toBe("https://daytona.example.com/dashboard/sandboxes");
  });

  it("gives the id but no link on a loopback API (the emulator), and nothing for a non-Daytona or missing id", () => {
    const local = encodeAddress({ sandboxId: "s2", apiUrl: "http://127.0.0.1:4000/api", apiKeyEnv: "DAYTONA_K" });
    expect(daytonaDashboardLink(local)).toEqual({ sandboxId: "s2", url: null });
    expect(daytonaDashboardLink("local:/tmp/x")).toBeNull();
    expect(daytonaDashboardLink(null)).toBeNull();
    expect(daytonaDashboardLink("daytona:s3?api=https%3A%2F%2Fevil.example&keyEnv=DATABASE_URL")).toBeNull();
  });
});
