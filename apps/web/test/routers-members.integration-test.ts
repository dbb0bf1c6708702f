// members.* against a real database: listing, role changes and suspension with the last-owner
// and owner-only rules, permission checks, and company scoping.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { boardUser, buildWorld, callerFor, rejection, type World } from "./routers-fixture";

const database = useTestDatabase();
let w: World;
const db = () => database.prisma();

beforeAll(async () => {
  w = await buildWorld(db());
});

const snapshot = async () => ({
  memberships: await db().companyMembership.findMany({
    orderBy: { id: "asc" },
    select: { id: true, role: true, status: true },
  }),
  audits: await db().activityLog.count(),
});

describe("members.list", () => {
  it("lists the company's members, active first and owners first, marking the caller", async () => {
    const members = await callerFor(db(), w.principals.member).members.list({
      companyId: w.companyA.id,
    });
    expect(members.map((m) => [m.user.name, m.role, m.status])).toEqual([
      ["Olive Owner", "owner", "active"],
      ["Ada Admin", "admin", "active"],
      ["Rita Runtime", "runtime_manager", "active"],
      ["Mel Member", "member", "active"],
      ["Oscar Owner", "owner", "suspended"],
      ["Sam Suspended", "member", "suspended"],
    ]);
    expect(members.filter((m) => m.isYou).map((m) => m.user.name)).toEqual(["Mel Member"]);
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.otherOwner).members.list({ companyId: w.companyA.id }),
        )
      ).code,
    ).toBe("NOT_FOUND");
  });
});

describe("members.updateRole", () => {
  it("lets an admin change a member's role, with an audit row", async () => {
    const result = await callerFor(db(), w.principals.admin).members.updateRole({
      companyId: w.companyA.id,
      membershipId: w.memberships.manager.id,
      role: "member",
    });
    expect(result).toEqual({ id: w.memberships.manager.id, role: "member", status: "active" });
    const audit = await db().activityLog.findFirstOrThrow({
      where: { action: "membership.role_changed", entityId: w.memberships.manager.id },
    });
    expect(audit).toMatchObject({
      actorType: "user",
      actorId: w.users.adminUser.id,
      details: { from: "runtime_manager", to: "member" },
    });
    await callerFor(db(), w.principals.admin).members.updateRole({
      companyId: w.companyA.id,
      membershipId: w.memberships.manager.id,
      role: "runtime_manager",
    });
  });

  it("is FORBIDDEN for a member, a runtime manager and a suspended member, changing nothing", async () => {
    const before = await snapshot();
    for (const principal of [w.principals.member, w.principals.manager, w.principals.suspended]) {
      const error = await rejection(
        callerFor(db(), principal).members.updateRole({
          companyId: w.companyA.id,
          membershipId: w.memberships.member.id,
          role: "admin",
        }),
      );
      expect(error.code).toBe("FORBIDDEN");
    }
    expect(await snapshot()).toEqual(before);
  });

  it("never demotes the last active owner (CONFLICT last_owner)", async () => {
    const before = await snapshot();
    const error = await rejection(
      callerFor(db(), w.principals.owner).members.updateRole({
        companyId: w.companyA.id,
        membershipId: w.memberships.owner.id,
        role: "admin",
      }),
    );
    expect(error).toMatchObject({ code: "CONFLICT", domainCode: "last_owner" });
    const suspend = await rejection(
      callerFor(db(), w.principals.localBoard).members.setStatus({
        companyId: w.companyA.id,
        membershipId: w.memberships.owner.id,
        status: "suspended",
      }),
    );
    expect(suspend).toMatchObject({ code: "CONFLICT", domainCode: "last_owner" });
    expect(await snapshot()).toEqual(before);
  });

  it("lets only owners grant or remove the owner role (admins get owner_required)", async () => {
    const before = await snapshot();
    const promote = await rejection(
      callerFor(db(), w.principals.admin).members.updateRole({
        companyId: w.companyA.id,
        membershipId: w.memberships.admin.id,
        role: "owner",
      }),
    );
    expect(promote).toMatchObject({ code: "FORBIDDEN", domainCode: "owner_required" });
    const demote = await rejection(
      callerFor(db(), w.principals.admin).members.updateRole({
        companyId: w.companyA.id,
        membershipId: w.memberships.owner.id,
        role: "member",
      }),
    );
    expect(demote).toMatchObject({ code: "FORBIDDEN", domainCode: "owner_required" });
    expect(await snapshot()).toEqual(before);
  });

  it("lets an owner hand over ownership once another active owner exists", async () => {
    const owner = callerFor(db(), w.principals.owner);
    await owner.members.updateRole({
      companyId: w.companyA.id,
      membershipId: w.memberships.admin.id,
      role: "owner",
    });
    // The former admin is an owner now (a fresh principal reflects the new membership).
    const newOwner = boardUser(w.users.adminUser.id, [{ companyId: w.companyA.id, role: "owner" }]);
    const result = await callerFor(db(), newOwner).members.updateRole({
      companyId: w.companyA.id,
      membershipId: w.memberships.owner.id,
      role: "admin",
    });
    expect(result.role).toBe("admin");
    // And back, so later tests start from the fixture's roles.
    await callerFor(db(), newOwner).members.updateRole({
      companyId: w.companyA.id,
      membershipId: w.memberships.owner.id,
      role: "owner",
    });
    await owner.members.updateRole({
      companyId: w.companyA.id,
      membershipId: w.memberships.admin.id,
      role: "admin",
    });
  });

  it("keeps one owner when two owners demote each other at the same time", async () => {
    await db().companyMembership.update({
      where: { id: w.memberships.secondOwner.id },
      data: { status: "active" },
    });
    const a = boardUser(w.users.ownerUser.id, [{ companyId: w.companyA.id, role: "owner" }]);
    const b = boardUser(w.users.secondOwnerUser.id, [{ companyId: w.companyA.id, role: "owner" }]);
    const results = await Promise.allSettled([
      callerFor(db(), a).members.updateRole({
        companyId: w.companyA.id,
        membershipId: w.memberships.secondOwner.id,
        role: "member",
      }),
      callerFor(db(), b).members.updateRole({
        companyId: w.companyA.id,
        membershipId: w.memberships.owner.id,
        role: "member",
      }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(
      await db().companyMembership.count({
        where: { companyId: w.companyA.id, role: "owner", status: "active" },
      }),
    ).toBe(1);
    // Restore the fixture: Olive owner (active), Oscar owner (suspended).
    const olive = await db().companyMembership.findUniqueOrThrow({
      where: { id: w.memberships.owner.id },
    });
    if (olive.role !== "owner")
      await db().companyMembership.update({ where: { id: olive.id }, data: { role: "owner" } });
    await db().companyMembership.update({
      where: { id: w.memberships.secondOwner.id },
      data: { role: "owner", status: "suspended" },
    });
  });

  it("refuses bad input and another company's membership, changing nothing", async () => {
    const before = await snapshot();
    const owner = callerFor(db(), w.principals.owner);
    expect(
      (
        await rejection(
          owner.members.updateRole({
            companyId: w.companyA.id,
            membershipId: w.memberships.member.id,
            role: "superuser" as "admin",
          }),
        )
      ).code,
    ).toBe("BAD_REQUEST");
    expect(
      (
        await rejection(
          owner.members.updateRole({ companyId: w.companyA.id, membershipId: "x", role: "admin" }),
        )
      ).code,
    ).toBe("BAD_REQUEST");
    expect(
      (
        await rejection(
          owner.members.setStatus({
            companyId: w.companyA.id,
            membershipId: w.memberships.member.id,
            status: "banned" as "active",
          }),
        )
      ).code,
    ).toBe("BAD_REQUEST");
    expect(
      (
        await rejection(
          owner.members.updateRole({
            companyId: w.companyA.id,
            membershipId: w.memberships.otherOwner.id,
            role: "member",
          }),
        )
      ).code,
    ).toBe("NOT_FOUND");
    expect(
      (
        await rejection(
          callerFor(db(), w.principals.otherOwner).members.updateRole({
            companyId: w.companyA.id,
            membershipId: w.memberships.member.id,
            role: "admin",
          }),
        )
      ).code,
    ).toBe("NOT_FOUND");
    expect(await snapshot()).toEqual(before);
  });
});

describe("members.setStatus", () => {
  it("suspends and reactivates a member with audit rows", async () => {
    const admin = callerFor(db(), w.principals.admin);
    expect(
      await admin.members.setStatus({
        companyId: w.companyA.id,
        membershipId: w.memberships.member.id,
        status: "suspended",
      }),
    ).toMatchObject({ status: "suspended" });
    expect(
      await admin.members.setStatus({
        companyId: w.companyA.id,
        membershipId: w.memberships.member.id,
        status: "active",
      }),
    ).toMatchObject({ status: "active" });
    const audits = await db().activityLog.findMany({
      where: { action: "membership.status_changed", entityId: w.memberships.member.id },
      orderBy: { createdAt: "asc" },
    });
    expect(audits.map((a) => a.details)).toEqual([
      { from: "active", to: "suspended" },
      { from: "suspended", to: "active" },
    ]);
  });

  it("is FORBIDDEN for a member", async () => {
    const error = await rejection(
      callerFor(db(), w.principals.member).members.setStatus({
        companyId: w.companyA.id,
        membershipId: w.memberships.admin.id,
        status: "suspended",
      }),
    );
    expect(error.code).toBe("FORBIDDEN");
    expect(
      await db().companyMembership.findUniqueOrThrow({ where: { id: w.memberships.admin.id } }),
    ).toMatchObject({ status: "active" });
  });
});
