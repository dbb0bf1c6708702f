import { describe, expect, it } from "vitest";
import { decideMetricsAccess } from "./access";

const admin = { kind: "board_user", userId: "u", isInstanceAdmin: true, memberships: [], via: "session" } as const;
const owner = { kind: "board_user", userId: "u", isInstanceAdmin: false, memberships: [{ companyId: "c", role: "owner", status: "active" }], via: "board_api_key" } as const;

describe("decideMetricsAccess", () => {
  it("allows the metrics token, the local board and instance administrators", () => {
    expect(decideMetricsAccess({ tokenMatched: true, principal: { kind: "anonymous" } }).kind).toBe("allow");
    expect(decideMetricsAccess({ tokenMatched: false, principal: { kind: "local_board" } }).kind).toBe("allow");
    expect(decideMetricsAccess({ tokenMatched: false, principal: admin }).kind).toBe("allow");
  });

  it("refuses anonymous callers with 401 and company members and agents with 403", () => {
    expect(decideMetricsAccess({ tokenMatched: false, principal: { kind: "anonymous" } })).toMatchObject({ kind: "deny", status: 401 });
    expect(decideMetricsAccess({ tokenMatched: false, principal: owner })).toMatchObject({ kind: "deny", status: 403 });
    expect(decideMetricsAccess({ tokenMatched: false, principal: { kind: "agent", agentId: "a", companyId: "c", keyId: "k" } })).toMatchObject({ kind: "deny", status: 403 });
  });
});
