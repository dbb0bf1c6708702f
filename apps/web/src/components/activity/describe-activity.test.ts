import { describe, expect, it } from "vitest";
import { describeActivity } from "./describe-activity";

describe("describeActivity", () => {
  it("R-RC-3 names an operator's reconstruction decision in words, not its action code", () => {
    expect(describeActivity("recovery.reconstruction_recorded", {}).verb).toBe("chose to continue from saved sources on");
    expect(describeActivity("recovery.reconstruction_delivered", {}).verb).toBe("started a fresh session from saved sources on");
  });

  it("R-RC-5 a withdrawn or cancelled decision says a fresh one is needed", () => {
    for (const action of ["recovery.reconstruction_cancelled", "recovery.reconstruction_withdrawn"]) {
      expect(describeActivity(action, {})).toEqual({ verb: "withdrew continuing from saved sources on", suffix: "(it needs a fresh decision)" });
    }
  });

  it("names a created environment and an agent's new environment, never its configuration", () => {
    expect(describeActivity("environment.created", { name: "daytona", provider: "daytona", config: { apiKeyEnv: "DAYTONA_API_KEY" } }).verb).toBe("created the environment daytona (daytona)");
    expect(describeActivity("agent.environment_changed", { from: null, to: "e", environmentName: "daytona" }).verb).toBe("pointed an agent at the environment daytona");
    expect(describeActivity("agent.environment_changed", {}).verb).toBe("changed an agent's environment");
  });

  it("an unknown action still reads sensibly", () => {
    expect(describeActivity("sandbox.some_new_thing", {}).verb).toBe("sandbox: some new thing");
  });
});
