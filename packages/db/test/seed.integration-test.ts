// The demo seed: complete, idempotent, and backed by a real workspace directory.
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../src/testing/index";
import { seedDemo, DEMO_COMPANY_ID, DEMO_SECOND_COMPANY_ID } from "../src/seed/seed-demo";
import { DEMO_WORKSPACE_FILES } from "../src/seed/demo-workspace";
import { BUILDER_COMMAND, PREVIOUS_BUILDER_COMMANDS, RESEARCHER_COMMAND } from "../src/seed/demo-agent";

describe("seedDemo", () => {
  const db = useTestDatabase();
  let instanceRoot = "";

  beforeAll(async () => {
    instanceRoot = await mkdtemp(path.join(os.tmpdir(), "copyback-seed-test-"));
  });
  afterAll(async () => {
    await rm(instanceRoot, { recursive: true, force: true });
  });

  async function counts() {
    const prisma = db.prisma();
    return {
      companies: await prisma.company.count(),
      users: await prisma.user.count(),
      memberships: await prisma.companyMembership.count(),
      agents: await prisma.agent.count(),
      environments: await prisma.environment.count(),
      workspaces: await prisma.executionWorkspace.count(),
      issues: await prisma.issue.count(),
      messages: await prisma.issueMessage.count(),
      activity: await prisma.activityLog.count(),
    };
  }

  it("creates the demo once; a second run changes nothing", async () => {
    const first = await seedDemo(db.prisma(), { instanceRoot });
    expect(first).toEqual({ companyId: DEMO_COMPANY_ID, created: true });
    const afterFirst = await counts();
    expect(afterFirst.companies).toBe(2);
    expect(afterFirst.issues).toBeGreaterThanOrEqual(6);
    expect(afterFirst.messages).toBeGreaterThan(afterFirst.issues);
    expect(afterFirst.activity).toBeGreaterThan(0);

    const second = await seedDemo(db.prisma(), { instanceRoot });
    expect(second).toEqual({ companyId: DEMO_COMPANY_ID, created: false });
    expect(await counts()).toEqual(afterFirst);
  });

  it("has board users in every role, a suspended member and an instance admin", async () => {
    const memberships = await db.prisma().companyMembership.findMany({
      where: { companyId: DEMO_COMPANY_ID },
      include: { user: true },
    });
    const byEmail = Object.fromEntries(
      memberships.map((m) => [m.user.email, `${m.role}/${m.status}`]),
    );
    expect(byEmail).toMatchObject({
      "ada@acme.test": "owner/active",
      "grace@acme.test": "admin/active",
      "linus@acme.test": "runtime_manager/active",
      "margaret@acme.test": "member/active",
    });
    expect(Object.values(byEmail)).toContain("member/suspended");
    const admins = await db.prisma().user.findMany({ where: { isInstanceAdmin: true } });
    expect(admins).toHaveLength(1);
    // No credentials yet: sign-in methods are the auth layer's to add.
    expect(await db.prisma().authAccount.count()).toBe(0);
    expect(
      await db.prisma().companyMembership.count({ where: { companyId: DEMO_SECOND_COMPANY_ID } }),
    ).toBeGreaterThan(0);
  });

  it("has issues in varied statuses with per-company identifiers and a matching counter", async () => {
    const issues = await db
      .prisma()
      .issue.findMany({ where: { companyId: DEMO_COMPANY_ID }, orderBy: { number: "asc" } });
    expect(new Set(issues.map((issue) => issue.status)).size).toBeGreaterThanOrEqual(5);
    expect(issues.map((issue) => issue.identifier)).toEqual(
      issues.map((issue) => `ACME-${issue.number}`),
    );
    const company = await db.prisma().company.findUniqueOrThrow({ where: { id: DEMO_COMPANY_ID } });
    expect(company.issueCounter).toBe(issues.length);
    for (const issue of issues)
      expect(
        await db.prisma().issueMessage.count({ where: { issueId: issue.id } }),
      ).toBeGreaterThan(0);
  });

  it("has the Builder agent on a local environment", async () => {
    const agent = await db.prisma().agent.findFirstOrThrow({
      where: { companyId: DEMO_COMPANY_ID, name: "Builder" },
      include: { environment: true },
    });
    expect(agent.command).toEqual(BUILDER_COMMAND);
    expect(agent.environment?.provider).toBe("local");
  });

  it("has the slow Researcher, whose partial notes/research.md exists from its first second", async () => {
    const agent = await db.prisma().agent.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, name: "Researcher" } });
    expect(agent.command).toEqual(RESEARCHER_COMMAND);
    const sandbox = await mkdtemp(path.join(os.tmpdir(), "copyback-researcher-"));
    const [file, ...args] = RESEARCHER_COMMAND;
    const child = spawn(file as string, args, { cwd: sandbox, env: { PATH: "/usr/bin:/bin", COPYBACK_RESULT_FILE: `${sandbox}.result.json` }, stdio: "ignore", detached: true });
    try {
      const notes = path.join(sandbox, "notes", "research.md");
      const deadline = Date.now() + 10_000;
      while (!(await readFile(notes, "utf8").catch(() => "")).startsWith("Research notes, started ") && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await readFile(notes, "utf8")).toMatch(/^Research notes, started \d{4}-/);
      // Still working: no result yet (that is what makes it a rehearsal of unpublished edits).
      expect(child.exitCode).toBeNull();
      await expect(readFile(`${sandbox}.result.json`, "utf8")).rejects.toThrow();
    } finally {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
      await rm(sandbox, { recursive: true, force: true });
    }
  });

  it("the demo agent writes notes/builder.log and a valid result file", async () => {
    const sandbox = await mkdtemp(path.join(os.tmpdir(), "copyback-builder-"));
    const resultFile = `${sandbox}.result.json`;
    try {
      const [file, ...args] = BUILDER_COMMAND;
      execFileSync(file as string, args, { cwd: sandbox, env: { PATH: "/usr/bin:/bin", COPYBACK_RESULT_FILE: resultFile } });
      expect(await readFile(path.join(sandbox, "notes", "builder.log"), "utf8")).toMatch(/^Built by Builder at \d{4}-\d\d-\d\dT/);
      expect(JSON.parse(await readFile(resultFile, "utf8"))).toMatchObject({ schema: "copyback.run-result.v1", outcome: "in_review" });
    } finally {
      await rm(sandbox, { recursive: true, force: true });
      await rm(resultFile, { force: true });
    }
  });

  it("upgrades a previous seed's Builder command, never an edited one", async () => {
    const prisma = db.prisma();
    const where = { companyId_name: { companyId: DEMO_COMPANY_ID, name: "Builder" } };
    await prisma.agent.update({ where, data: { command: [...(PREVIOUS_BUILDER_COMMANDS[0] ?? [])] } });
    await seedDemo(prisma, { instanceRoot });
    expect((await prisma.agent.findUniqueOrThrow({ where })).command).toEqual(BUILDER_COMMAND);

    await prisma.agent.update({ where, data: { command: ["/bin/echo", "mine"] } });
    await seedDemo(prisma, { instanceRoot });
    expect((await prisma.agent.findUniqueOrThrow({ where })).command).toEqual(["/bin/echo", "mine"]);
    await prisma.agent.update({ where, data: { command: [...BUILDER_COMMAND] } });
  });

  it("creates the workspace directory with real files at the recorded canonical path", async () => {
    const workspace = await db
      .prisma()
      .executionWorkspace.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID } });
    expect(workspace.hostPath).toBe(
      await realpath(path.join(instanceRoot, "workspaces", "acme-main")),
    );
    for (const [relative, content] of Object.entries(DEMO_WORKSPACE_FILES)) {
      expect(await readFile(path.join(workspace.hostPath, relative), "utf8")).toBe(content);
    }
  });

  it("host affinity: a demo seeded before (unbound) stays as it is when seeded again with a host id", async () => {
    const before = await db.prisma().executionWorkspace.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID } });
    expect(before.hostId).toBeNull();
    expect(await seedDemo(db.prisma(), { instanceRoot, hostId: "host-a" })).toEqual({ companyId: DEMO_COMPANY_ID, created: false });
    expect((await db.prisma().executionWorkspace.findUniqueOrThrow({ where: { id: before.id } })).hostId).toBeNull();
  });

  it("never overwrites a workspace file the user changed", async () => {
    const workspace = await db
      .prisma()
      .executionWorkspace.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID } });
    const readme = path.join(workspace.hostPath, "README.md");
    await writeFile(readme, "mine\n");
    await seedDemo(db.prisma(), { instanceRoot });
    expect(await readFile(readme, "utf8")).toBe("mine\n");
  });
});

describe("seedDemo with the seeding host's id (issue 23)", () => {
  const db = useTestDatabase();
  let instanceRoot = "";
  beforeAll(async () => {
    instanceRoot = await mkdtemp(path.join(os.tmpdir(), "copyback-seed-host-"));
  });
  afterAll(async () => {
    await rm(instanceRoot, { recursive: true, force: true });
  });

  it("host affinity: the demo workspace it creates under its own instance root is bound to the seeding host, and another host's seed changes nothing", async () => {
    expect(await seedDemo(db.prisma(), { instanceRoot, hostId: "host-a" })).toEqual({ companyId: DEMO_COMPANY_ID, created: true });
    const workspace = await db.prisma().executionWorkspace.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID } });
    expect(workspace).toMatchObject({ name: "acme-main", hostId: "host-a", hostPath: await realpath(path.join(instanceRoot, "workspaces", "acme-main")) });
    // Another host's seed on the same database (its own instance root) finds the demo there and changes nothing.
    const other = await mkdtemp(path.join(os.tmpdir(), "copyback-seed-host-b-"));
    try {
      expect(await seedDemo(db.prisma(), { instanceRoot: other, hostId: "host-b" })).toEqual({ companyId: DEMO_COMPANY_ID, created: false });
    } finally {
      await rm(other, { recursive: true, force: true });
    }
    expect((await db.prisma().executionWorkspace.findUniqueOrThrow({ where: { id: workspace.id } })).hostId).toBe("host-a");
  });
});
