import { describe, expect, it } from "vitest";
import { ALL_PERMISSIONS, ROLE_PERMISSIONS, authorize, visibleCompanies, type Principal, type Permission } from "../../src/auth";

const ACME = "00000000-0000-4000-8000-000000000001";
const GLOBEX = "00000000-0000-4000-8000-000000000002";

const user = (role: string | null, status: string | null = "active", companyId = ACME): Principal => ({
  kind: "board_user",
  userId: "u",
  isInstanceAdmin: false,
  memberships: [{ companyId, role, status }],
  via: "session",
});

const allowed = (p: Principal, perm: Permission, company = ACME) => authorize(p, perm, company).kind === "allow";

describe("permission registry", () => {
  it("R-ATT-2: runtime:confirm_owner_stop is granted to active owners and admins, the trusted local board and instance admins only", () => {
    expect(allowed(user("owner"), "runtime:confirm_owner_stop")).toBe(true);
    expect(allowed(user("admin"), "runtime:confirm_owner_stop")).toBe(true);
    expect(allowed({ kind: "local_board" }, "runtime:confirm_owner_stop")).toBe(true);
    expect(allowed({ kind: "board_user", userId: "i", isInstanceAdmin: true, memberships: [], via: "session" }, "runtime:confirm_owner_stop")).toBe(true);
    expect(allowed(user("runtime_manager"), "runtime:confirm_owner_stop")).toBe(false);
    expect(allowed(user("member"), "runtime:confirm_owner_stop")).toBe(false);
    expect(allowed(user("owner", "suspended"), "runtime:confirm_owner_stop")).toBe(false);
    expect(allowed({ kind: "agent", agentId: "a", companyId: ACME, keyId: "k" }, "runtime:confirm_owner_stop")).toBe(false);
  });

  it("R-UI-3: runtime:manage is for board operators (owners, admins, runtime managers), not members or agents", () => {
    expect(allowed(user("owner"), "runtime:manage")).toBe(true);
    expect(allowed(user("admin"), "runtime:manage")).toBe(true);
    expect(allowed(user("runtime_manager"), "runtime:manage")).toBe(true);
    expect(allowed(user("member"), "runtime:manage")).toBe(false);
    expect(allowed({ kind: "agent", agentId: "a", companyId: ACME, keyId: "k" }, "runtime:manage")).toBe(false);
  });

  it("R-UI-5: missing or unknown role data denies every permission, reads included", () => {
    for (const role of [null, "", "superuser", "OWNER"]) {
      for (const perm of ALL_PERMISSIONS) expect(allowed(user(role), perm)).toBe(false);
    }
    for (const status of [null, "pending", "suspended"]) expect(allowed(user("owner", status), "issues:read")).toBe(false);
  });

  it("another company's ids read as not found, not forbidden", () => {
    expect(authorize(user("owner", "active", GLOBEX), "issues:read", ACME)).toMatchObject({ kind: "deny", code: "not_found" });
    expect(authorize({ kind: "agent", agentId: "a", companyId: GLOBEX, keyId: "k" }, "agent:finish_run", ACME)).toMatchObject({ code: "not_found" });
  });

  it("anonymous principals are unauthenticated", () => {
    expect(authorize({ kind: "anonymous" }, "issues:read", ACME)).toMatchObject({ kind: "deny", code: "unauthenticated" });
  });

  it("agents can only finish their own runs; board principals cannot act as agents", () => {
    const agent: Principal = { kind: "agent", agentId: "a", companyId: ACME, keyId: "k" };
    expect(ALL_PERMISSIONS.filter((p) => allowed(agent, p))).toEqual(["agent:finish_run"]);
    expect(allowed({ kind: "local_board" }, "agent:finish_run")).toBe(false);
    expect(allowed(user("owner"), "agent:finish_run")).toBe(false);
  });

  it("every role grants only registered permissions and reads are common to all roles", () => {
    for (const perms of Object.values(ROLE_PERMISSIONS)) {
      for (const p of perms) expect(ALL_PERMISSIONS).toContain(p);
      expect(perms.has("issues:read")).toBe(true);
    }
  });

  it("visible companies follow active, known memberships", () => {
    expect(visibleCompanies(user("member"))).toEqual([ACME]);
    expect(visibleCompanies(user("member", "suspended"))).toEqual([]);
    expect(visibleCompanies(user("wizard"))).toEqual([]);
    expect(visibleCompanies({ kind: "local_board" })).toBe("all");
    expect(visibleCompanies({ kind: "anonymous" })).toEqual([]);
  });
});
