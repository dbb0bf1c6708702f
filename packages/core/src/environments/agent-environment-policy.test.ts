import { describe, expect, it } from "vitest";
import { decideAgentEnvironment, type AgentEnvironmentSnapshot } from "./agent-environment-policy";

const A = "company-a";
const agent = { id: "ag", companyId: A, name: "builder", environmentId: null as string | null, archived: false };
const env = { id: "env", companyId: A, name: "daytona", provider: "daytona" };
const decide = (s: Partial<AgentEnvironmentSnapshot>) => decideAgentEnvironment({ scopeCompanyId: null, agent, environment: env, ...s }, "env", "ag");

describe("decideAgentEnvironment", () => {
  it("changes an agent without an environment, and says unchanged when it already has that one", () => {
    expect(decide({})).toEqual({ kind: "change", from: null, to: "env" });
    expect(decide({ agent: { ...agent, environmentId: "old" } })).toEqual({ kind: "change", from: "old", to: "env" });
    expect(decide({ agent: { ...agent, environmentId: "env" } })).toEqual({ kind: "unchanged" });
  });

  it("refuses a missing agent or environment, an archived agent, and an environment of another company", () => {
    const code = (s: Partial<AgentEnvironmentSnapshot>) => {
      const d = decide(s);
      return d.kind === "reject" ? `${d.errorKind}:${d.code}` : d.kind;
    };
    expect(code({ agent: null })).toBe("not_found:agent_not_found");
    expect(code({ environment: null })).toBe("not_found:environment_not_found");
    expect(code({ agent: { ...agent, archived: true } })).toBe("conflict:agent_archived");
    expect(code({ environment: { ...env, companyId: "company-b" } })).toBe("invalid:environment_of_another_company");
  });

  it("in a company's scope, another company's agent or environment is not found (nothing about it is told)", () => {
    const code = (s: Partial<AgentEnvironmentSnapshot>) => {
      const d = decide(s);
      return d.kind === "reject" ? d.code : d.kind;
    };
    expect(code({ scopeCompanyId: "company-b" })).toBe("agent_not_found");
    expect(code({ scopeCompanyId: A, environment: { ...env, companyId: "company-b" } })).toBe("environment_not_found");
    expect(code({ scopeCompanyId: A })).toBe("change");
  });
});
