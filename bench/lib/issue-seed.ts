// One company with N issues (statuses, assignees and activity times spread as on a real board),
// the newest with a 30-message conversation and 5 runs: the console benchmarks' data.
import { createPrismaClient } from "@copyback/db";

const STATUSES = ["backlog", "todo", "in_progress", "in_review", "blocked", "done", "cancelled"] as const;

export async function seedIssues(url: string, issues: number): Promise<{ companyId: string; issueId: string }> {
  const prisma = createPrismaClient({ databaseUrl: url, poolSize: 4, applicationName: "copyback-bench" });
  try {
    const company = await prisma.company.create({ data: { name: "Bench Robotics", issuePrefix: "BENCH", issueCounter: issues } });
    const agents = await Promise.all(["Builder", "Reviewer", "Tester"].map((name) => prisma.agent.create({ data: { companyId: company.id, name, command: ["/bin/true"] } })));
    const user = await prisma.user.create({ data: { name: "Bench Owner", email: `bench-${Date.now()}@bench.test` } });
    await prisma.companyMembership.create({ data: { companyId: company.id, userId: user.id, role: "owner" } });
    const now = Date.now();
    for (let start = 0; start < issues; start += 1000) {
      const rows = [];
      for (let i = start; i < Math.min(start + 1000, issues); i++) {
        const n = i + 1;
        rows.push({
          companyId: company.id,
          number: n,
          identifier: `BENCH-${n}`,
          title: `Benchmark task ${n}: make the motor controller ${["faster", "safer", "quieter", "cheaper"][n % 4]}`,
          description: "A generated task for the issue page benchmark.",
          status: STATUSES[n % STATUSES.length]!,
          assigneeAgentId: n % 4 === 0 ? null : agents[n % agents.length]!.id,
          createdByUserId: user.id,
          // Spread over ~70 days, a few sharing a timestamp (ties exercise the keyset order).
          lastActivityAt: new Date(now - Math.floor(n / 2) * 600_000),
          createdAt: new Date(now - n * 600_000 - 3_600_000),
        });
      }
      await prisma.issue.createMany({ data: rows });
    }
    const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: company.id }, orderBy: [{ lastActivityAt: "desc" }, { id: "desc" }] });
    await prisma.issueMessage.createMany({
      data: Array.from({ length: 30 }, (_, i) => ({
        companyId: company.id,
        issueId: issue.id,
        authorType: i % 2 === 0 ? ("user" as const) : ("agent" as const),
        authorUserId: i % 2 === 0 ? user.id : null,
        authorAgentId: i % 2 === 0 ? null : agents[0]!.id,
        body: `Message ${i + 1} of the conversation about ${issue.identifier}.`,
        createdAt: new Date(now - (30 - i) * 60_000),
      })),
    });
    for (let i = 0; i < 5; i++) {
      await prisma.heartbeatRun.create({
        data: { companyId: company.id, agentId: agents[0]!.id, nativeIssueId: issue.id, status: "succeeded", startedAt: new Date(now - (i + 1) * 3_600_000), finishedAt: new Date(now - (i + 1) * 3_500_000) },
      });
    }
    await prisma.$executeRawUnsafe("ANALYZE");
    return { companyId: company.id, issueId: issue.id };
  } finally {
    await prisma.$disconnect();
  }
}
