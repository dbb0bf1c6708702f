// Benchmark: the reconciler's finalization sweep selection (DESIGN.md section 8) on
// 100,000 runs across 50 companies of which 1,000 are due. Prints figures; asserts nothing.
//
//   npm run bench:reconciler          (or .tools/node_modules/.bin/pnpm bench:reconciler)
//
// A fresh migrated database on COPYBACK_TEST_DATABASE_URL (or postgresql://postgres@127.0.0.1:5432/
// postgres) gets, by bulk SQL (generate_series): 50 companies, 200 tasks each, and 100,000 native
// runs with their finalization coordinators: 99,000 committed and 1,000 due (retryable_failure
// past next_attempt_at, result_accepted, workspace_finalizing, arbitrating). The due ones are
// skewed on purpose: one noisy company has 510 of them and they are the oldest, the 49 others 10
// each, so an oldest-first selection would hand the whole first batch to the noisy company.
// After ANALYZE it times, through Prisma exactly as the sweep runs it:
//   - the selection `dueFinalizationsSql(50)` with all 1,000 due (p50/p95 over BENCH_SAMPLES);
//   - a whole pass draining the 1,000 due units in batches of 50, each unit "handled" by one
//     cheap write (moved to committed), as the reconciler passes again while a batch comes back
//     full: BENCH_PASSES passes, the due rows restored (and VACUUM ANALYZE) between them;
// and prints the selection's EXPLAIN (ANALYZE, BUFFERS), whether it reads the coordinators through
// an index with no sequential scan of a large table, and how many companies the first batch reaches.
// Target (printed, never asserted): one pass under 1 s. The database is dropped at the end
// unless BENCH_KEEP_DATABASE=1.
//
// Knobs: BENCH_RUNS (100000), BENCH_DUE (1000), BENCH_COMPANIES (50), BENCH_BATCH (50),
// BENCH_SAMPLES (200), BENCH_PASSES (3).
import { performance } from "node:perf_hooks";
import pg from "pg";
import { createPrismaClient, type PrismaClient } from "@copyback/db/client";
import { dueFinalizationsSql } from "@copyback/core/recovery";
import { createBenchDatabase } from "./lib/bench-database";
import { ms, percentile, renderTable } from "./lib/stats";

const RUNS = Number(process.env.BENCH_RUNS ?? 100_000);
const DUE = Number(process.env.BENCH_DUE ?? 1_000);
const COMPANIES = Number(process.env.BENCH_COMPANIES ?? 50);
const BATCH = Number(process.env.BENCH_BATCH ?? 50);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const PASSES = Number(process.env.BENCH_PASSES ?? 3);
const ISSUES_PER_COMPANY = 200;
const TARGET_PASS_MS = 1_000;
/** Tables that must never be scanned sequentially by the selection (they grow with every run). */
const LARGE_TABLES = ["native_run_finalizations", "heartbeat_runs"];

const say = (line = "") => process.stdout.write(`${line}\n`);

interface Unit {
  runId: string;
  companyId: string;
}

/** Due units per company: the others get an equal share of 49%, the noisy company the rest. */
function dueSplit(): { noisy: number; others: number } {
  const others = Math.floor((DUE * 0.49) / (COMPANIES - 1));
  return { noisy: DUE - others * (COMPANIES - 1), others };
}

async function seed(client: pg.Client): Promise<void> {
  const { noisy, others } = dueSplit();
  const perCompany = Math.ceil(RUNS / COMPANIES);
  if (noisy > perCompany) throw new Error("BENCH_DUE too large for BENCH_RUNS / BENCH_COMPANIES");
  // Temporary tables of this one connection carry the generated ids from statement to statement.
  await client.query(
    `CREATE TEMP TABLE bc AS SELECT n, gen_random_uuid() AS id FROM generate_series(1, $1::int) n`,
    [COMPANIES],
  );
  await client.query(
    `INSERT INTO companies (id, name, issue_prefix, issue_counter)
     SELECT id, 'Bench company ' || n, 'B' || n, $1::int FROM bc`,
    [ISSUES_PER_COMPANY],
  );
  await client.query(
    `CREATE TEMP TABLE ba AS SELECT n, gen_random_uuid() AS id, id AS company_id FROM bc`,
  );
  await client.query(
    `INSERT INTO agents (id, company_id, name, command) SELECT id, company_id, 'Builder', ARRAY['/bin/true'] FROM ba`,
  );
  await client.query(
    `CREATE TEMP TABLE bi AS
     SELECT bc.n AS cn, i, gen_random_uuid() AS id, bc.id AS company_id
     FROM bc, generate_series(1, $1::int) i`,
    [ISSUES_PER_COMPANY],
  );
  await client.query(
    `INSERT INTO issues (id, company_id, number, identifier, title, status)
     SELECT id, company_id, i, 'B' || cn || '-' || i, 'Bench task ' || i, 'in_review' FROM bi`,
  );
  // Run k belongs to company cn = (k-1) % C + 1 and is that company's j-th run; a task holds
  // every C*200-th run of its company. Due: the noisy company's (cn = 1) first `noisy` runs and
  // every other company's first `others`; their due times make the noisy company's the oldest.
  await client.query(
    `CREATE TEMP TABLE br AS
     SELECT k, cn, j, gen_random_uuid() AS id,
            (cn = 1 AND j <= $3::int) OR (cn > 1 AND j <= $4::int) AS due,
            CASE WHEN cn = 1 THEN now() - interval '2 hours' + j * interval '1 second'
                 ELSE now() - interval '30 minutes' + (j * $2::int + cn) * interval '1 second' END AS due_at
     FROM (SELECT k, (k - 1) % $2::int + 1 AS cn, (k - 1) / $2::int + 1 AS j FROM generate_series(1, $1::int) k) g`,
    [RUNS, COMPANIES, noisy, others],
  );
  await client.query(`ALTER TABLE br ADD PRIMARY KEY (k)`);
  await client.query(
    `INSERT INTO heartbeat_runs (id, company_id, agent_id, native_issue_id, runtime_mode, status, native_phase, started_at, finished_at, created_at, updated_at)
     SELECT br.id, bc.id, ba.id, bi.id, 'native',
            CASE WHEN br.due THEN 'running'::run_status ELSE 'succeeded'::run_status END,
            CASE WHEN br.due THEN NULL ELSE 'committed' END,
            br.due_at - interval '10 minutes',
            CASE WHEN br.due THEN NULL ELSE br.due_at END,
            br.due_at - interval '10 minutes', br.due_at
     FROM br
     JOIN bc ON bc.n = br.cn
     JOIN ba ON ba.n = br.cn
     JOIN bi ON bi.cn = br.cn AND bi.i = (br.j - 1) % $1::int + 1`,
    [ISSUES_PER_COMPANY],
  );
  // The due phases, by the run's number: 40% retryable_failure whose next attempt is past,
  // 30% result_accepted, 20% workspace_finalizing, 10% arbitrating.
  await client.query(
    `INSERT INTO native_run_finalizations (id, company_id, run_id, issue_id, phase, attempt, next_attempt_at, committed_at, created_at, updated_at)
     SELECT gen_random_uuid(), r.company_id, r.id, r.native_issue_id,
            CASE WHEN NOT br.due THEN 'committed'
                 WHEN br.j % 10 < 4 THEN 'retryable_failure'
                 WHEN br.j % 10 < 7 THEN 'result_accepted'
                 WHEN br.j % 10 < 9 THEN 'workspace_finalizing'
                 ELSE 'arbitrating' END::finalization_phase,
            CASE WHEN br.due AND br.j % 10 < 4 THEN 1 ELSE 0 END,
            CASE WHEN br.due AND br.j % 10 < 4 THEN br.due_at END,
            CASE WHEN br.due THEN NULL ELSE br.due_at END,
            br.due_at - interval '10 minutes',
            CASE WHEN br.due AND br.j % 10 < 4 THEN br.due_at - interval '1 minute' ELSE br.due_at END
     FROM br JOIN heartbeat_runs r ON r.id = br.id`,
  );
  // What a reset between passes restores.
  await client.query(
    `CREATE TEMP TABLE bench_due AS
     SELECT run_id, phase, attempt, next_attempt_at, updated_at FROM native_run_finalizations WHERE phase <> 'committed'`,
  );
  await client.query("ANALYZE");
}

async function restoreDue(client: pg.Client): Promise<void> {
  await client.query(
    `UPDATE native_run_finalizations f
     SET phase = d.phase, attempt = d.attempt, next_attempt_at = d.next_attempt_at, committed_at = NULL, updated_at = d.updated_at
     FROM bench_due d WHERE f.run_id = d.run_id`,
  );
  await client.query("VACUUM ANALYZE native_run_finalizations");
}

const select = (prisma: PrismaClient, limit: number) =>
  prisma.$queryRaw<Unit[]>(dueFinalizationsSql(limit));

async function timeSelection(prisma: PrismaClient): Promise<number[]> {
  for (let i = 0; i < 20; i++) await select(prisma, BATCH);
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    await select(prisma, BATCH);
    times.push(performance.now() - started);
  }
  return times;
}

interface PassFigures {
  totalMs: number;
  batches: number;
  handled: number;
  selectMs: number[];
  /** Selection plus the batch's writes: one Reconciler.pass() of this sweep. */
  batchMs: number[];
}

/** Selects and handles until nothing is due, as the reconciler passes again after a full batch. */
async function drain(prisma: PrismaClient): Promise<PassFigures> {
  const figures: PassFigures = { totalMs: 0, batches: 0, handled: 0, selectMs: [], batchMs: [] };
  const started = performance.now();
  for (;;) {
    const batchStarted = performance.now();
    const units = await select(prisma, BATCH);
    figures.selectMs.push(performance.now() - batchStarted);
    if (units.length === 0) break;
    for (const unit of units) {
      // A cheap stand-in for finalizeRun: the unit leaves the due set.
      await prisma.$executeRaw`
        UPDATE native_run_finalizations
        SET phase = 'committed', committed_at = now(), next_attempt_at = NULL, updated_at = now()
        WHERE run_id = ${unit.runId}::uuid AND phase <> 'committed'`;
      figures.handled += 1;
    }
    figures.batches += 1;
    figures.batchMs.push(performance.now() - batchStarted);
  }
  figures.totalMs = performance.now() - started;
  return figures;
}

async function fairness(client: pg.Client, prisma: PrismaClient): Promise<void> {
  const batch = await select(prisma, BATCH);
  const companies = new Set(batch.map((u) => u.companyId));
  const [noisy] = (await client.query<{ id: string }>(`SELECT id FROM bc WHERE n = 1`)).rows;
  const fromNoisy = batch.filter((u) => u.companyId === noisy?.id).length;
  // What a plain oldest-first selection over the same rows would have taken.
  const fifo = await client.query<{ company_id: string }>(
    `SELECT company_id FROM native_run_finalizations
     WHERE phase IN ('result_accepted', 'workspace_finalizing', 'arbitrating', 'retryable_failure')
     ORDER BY COALESCE(next_attempt_at, updated_at) LIMIT $1`,
    [BATCH],
  );
  const fifoNoisy = fifo.rows.filter((r) => r.company_id === noisy?.id).length;
  const { noisy: noisyDue, others } = dueSplit();
  say(
    `fairness: the first batch of ${batch.length} comes from ${companies.size} distinct companies ` +
      `(of ${COMPANIES} with due work; the noisy company with ${noisyDue} due, the oldest, contributes ${fromNoisy}; ` +
      `each other company has ${others}). A plain oldest-first selection would take ${fifoNoisy} of ${BATCH} from the noisy company.`,
  );
}

async function explain(client: pg.Client): Promise<void> {
  const sql = dueFinalizationsSql(BATCH);
  const plan = await client.query<{ "QUERY PLAN": string }>(
    `EXPLAIN (ANALYZE, BUFFERS) ${sql.text}`,
    sql.values as unknown[],
  );
  const lines = plan.rows.map((r) => r["QUERY PLAN"]);
  say(`EXPLAIN (ANALYZE, BUFFERS) of dueFinalizationsSql(${BATCH}), ${DUE} due of ${RUNS}:`);
  for (const line of lines) say(`  ${line}`);
  const seqScans = LARGE_TABLES.filter((table) => lines.some((l) => l.includes(`Seq Scan on ${table}`)));
  const indexed = lines.some((l) => /Index (Only )?Scan using \S+ on native_run_finalizations/.test(l) || l.includes("Bitmap Index Scan"));
  say(
    seqScans.length === 0 && indexed
      ? "the selection reads native_run_finalizations through an index and scans no large table sequentially (O(due))"
      : `the selection is NOT O(due): sequential scans of ${seqScans.join(", ") || "none"}, index on coordinators: ${indexed}`,
  );
  say(`scans: ${describeScans(lines).join("; ")}`);
}

/** "index X on T (n rows)" / "sequential T (n rows)" for every scan node of a text plan. */
function describeScans(lines: readonly string[]): string[] {
  const scans: string[] = [];
  for (const line of lines) {
    const rows = /actual time=\S+ rows=(\d+) loops=(\d+)/.exec(line);
    const count = rows ? ` (${Number(rows[1]) * Number(rows[2])} rows)` : "";
    const index =
      /(?:Index Only Scan|Index Scan|Bitmap Index Scan) (?:Backward )?(?:using )?(?:on )?(\w+)(?: on (\w+))?/.exec(
        line,
      );
    if (index) scans.push(`index ${index[1]}${index[2] ? ` on ${index[2]}` : ""}${count}`);
    const seq = /Seq Scan on (\w+)/.exec(line);
    if (seq) scans.push(`sequential ${seq[1]}${count}`);
  }
  return scans;
}

async function main(): Promise<void> {
  const database = await createBenchDatabase("reconciler");
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const prisma = createPrismaClient({
    databaseUrl: database.url,
    poolSize: 2,
    applicationName: "copyback-bench",
  });
  try {
    say(`database ${database.name} on ${database.server}, migrated`);
    const seedStarted = performance.now();
    await seed(client);
    const counts = await client.query<{ phase: string; n: string }>(
      `SELECT phase, count(*) AS n FROM native_run_finalizations GROUP BY phase ORDER BY phase`,
    );
    say(
      `inserted ${RUNS} runs across ${COMPANIES} companies (${COMPANIES * ISSUES_PER_COMPANY} tasks) in ` +
        `${ms(performance.now() - seedStarted)} and analyzed: ` +
        counts.rows.map((r) => `${r.phase} ${r.n}`).join(", "),
    );
    say();

    const selection = await timeSelection(prisma);
    say(
      `selection dueFinalizationsSql(${BATCH}) with ${DUE} due, through Prisma, ${SAMPLES} samples after 20 warm-up: ` +
        `p50 ${ms(percentile(selection, 50))}, p95 ${ms(percentile(selection, 95))}, max ${ms(Math.max(...selection))}`,
    );
    await fairness(client, prisma);
    say();
    await explain(client);
    say();

    const passes: PassFigures[] = [];
    for (let pass = 0; pass < PASSES; pass++) {
      if (pass > 0) await restoreDue(client);
      passes.push(await drain(prisma));
    }
    say(
      `whole pass: drain ${DUE} due units in batches of ${BATCH} (selection + one write per unit), ${PASSES} passes:`,
    );
    say(
      renderTable(
        [
          "pass",
          "total",
          "of it selections",
          "batches",
          "handled",
          "selection p50",
          "selection p95",
          "batch p50",
          "batch p95",
          "target < 1 s",
        ],
        passes.map((p, i) => [
          String(i + 1),
          ms(p.totalMs),
          ms(p.selectMs.reduce((a, b) => a + b, 0)),
          String(p.batches),
          String(p.handled),
          ms(percentile(p.selectMs, 50)),
          ms(percentile(p.selectMs, 95)),
          ms(percentile(p.batchMs, 50)),
          ms(percentile(p.batchMs, 95)),
          p.totalMs < TARGET_PASS_MS ? "PASS" : "MISS",
        ]),
      ),
    );
    const totals = passes.map((p) => p.totalMs);
    say(
      `median whole pass ${ms(percentile(totals, 50))} (target ${ms(TARGET_PASS_MS)}: ` +
        `${percentile(totals, 50) < TARGET_PASS_MS ? "PASS" : "MISS"}); load average ${(await loadAverage()).join(" ")}`,
    );
  } finally {
    await prisma.$disconnect();
    await client.end();
    await database.drop();
  }
}

async function loadAverage(): Promise<string[]> {
  const os = await import("node:os");
  return os.loadavg().map((v) => v.toFixed(2));
}

await main();
