// Demo passwords in authenticated mode (README "Signing in"): the launcher gives every demo user
// the documented password through better-auth's own hashing, once, and never replaces a password.
import os from "node:os";
import path from "node:path";
import fs from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyPassword } from "better-auth/crypto";
import { seedDemo } from "@copyback/db";
import { useTestDatabase } from "@copyback/db/testing";
import { DEMO_PASSWORD, ensureDemoPasswords, setPassword } from "~/server/auth/credentials";

const testDb = useTestDatabase();
let instanceRoot: string;

beforeAll(async () => {
  instanceRoot = await fs.mkdtemp(path.join(os.tmpdir(), "copyback-demo-credentials-"));
  await seedDemo(testDb.prisma(), { instanceRoot });
});
afterAll(async () => {
  await fs.rm(instanceRoot, { recursive: true, force: true });
});

describe("ensureDemoPasswords", () => {
  it("gives each demo user the demo password once, and leaves other users and set passwords alone", async () => {
    const prisma = testDb.prisma();
    const outsider = await prisma.user.create({ data: { name: "Real Person", email: "real@example.com" } });
    const ada = await prisma.user.findUniqueOrThrow({ where: { email: "ada@acme.test" } });
    await setPassword(prisma, ada.id, "ada's own password");

    const given = await ensureDemoPasswords(prisma);
    expect(given).toContain("grace@acme.test");
    expect(given).toContain("barbara@copyback.test");
    expect(given).not.toContain("ada@acme.test");
    expect(given).not.toContain(outsider.email);

    const grace = await prisma.authAccount.findFirstOrThrow({ where: { user: { email: "grace@acme.test" }, providerId: "credential" } });
    expect(await verifyPassword({ hash: grace.password ?? "", password: DEMO_PASSWORD })).toBe(true);
    const adaAccount = await prisma.authAccount.findFirstOrThrow({ where: { userId: ada.id, providerId: "credential" } });
    expect(await verifyPassword({ hash: adaAccount.password ?? "", password: "ada's own password" })).toBe(true);
    expect(await prisma.authAccount.count({ where: { userId: outsider.id } })).toBe(0);

    expect(await ensureDemoPasswords(prisma)).toEqual([]);
  });
});
