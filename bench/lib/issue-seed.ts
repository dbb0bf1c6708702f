// One company with N issues (statuses, assignees and activity times spread as on a real board),
// the newest with a 30-message conversation and 5 runs: the console benchmarks' data.
import { createPrismaClient } from "@copyback/db";

export async function seedIssues(url: string, issues: number): Promise<{ companyId: string; issueId: string }> {
  const prisma = createPrismaClient({ databaseUrl: url, poolSize: 4, applicationName: "copyback-bench" });
  try {
    const company = await prisma.company.create({ data: { name: "Bench Robotics", issuePrefix: "BENCH", issueCounter: issues } });
    const agents = await Promise.all(["Builder", "Reviewer", "Tester"].map((name) => prisma.agent.create({ data: { companyId: company.id, name, command: ["/bin/true"] } })));
    const user = await prisma.user.create({ data: { name: "Bench Owner", email: `bench-${Date.now()}@bench.test` } });
    await prisma.companyMembership.create({ data: { companyId: company.id, userId: user.id, role: "owner" } });
    const now = Date.now();
    // One INSERT ... SELECT over generate_series (seconds for 100,000 rows, where row batches
    // through the client took minutes on a busy machine); the same spread as before: status by
    // n mod 7, every fourth unassigned, two issues per activity timestamp (ties exercise the
    // keyset order), ~70 days of activity.
    await prisma.$executeRawUnsafe(
      `INSERT INTO issues (id, company_id, number, identifier, title, description, status,
                           assignee_agent_id, created_by_user_id, last_activity_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1::uuid, n, 'BENCH-' || n,
              'Benchmark task ' || n || ': make the motor controller ' || (ARRAY['faster','safer','quieter','cheaper'])[n % 4 + 1],
              'A generated task for the issue page benchmark.',
              ((ARRAY['backlog','todo','in_progress','in_review','blocked','done','cancelled'])[n % 7 + 1])::issue_status,
              CASE WHEN n % 4 = 0 THEN NULL ELSE ($2::uuid[])[n % 3 + 1] END,
              $3::uuid,
              to_timestamp(($4::bigint - (n / 2)::bigint * 600000) / 1000.0),
              to_timestamp(($4::bigint - n::bigint * 600000 - 3600000) / 1000.0),
              now()
       FROM generate_series(1, $5::int) n`,
      company.id,
      agents.map((agent) => agent.id),
      user.id,
      now,
      issues,
    );
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
