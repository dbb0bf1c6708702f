// pnpm --filter @copyback/db seed
// Seeds the demo data into DATABASE_URL, or into the embedded database of the instance root
// (COPYBACK_HOME, default ~/.copyback) when DATABASE_URL is unset. Migrations are applied first.
import { resolveDatabase } from "../runtime/resolve-database";
import { embeddedPortFrom, instanceRootFrom } from "../runtime/instance-root";
import { createPrismaClient } from "../client/create-prisma-client";
import { seedDemo } from "../seed/seed-demo";
import { cliEnv, processEnv } from "./env";

const env = cliEnv();
const instanceRoot = instanceRootFrom(processEnv());
const database = await resolveDatabase({
  ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
  instanceRoot,
  port: embeddedPortFrom(processEnv()),
  migrate: true,
});
const prisma = createPrismaClient({
  databaseUrl: database.url,
  poolSize: 2,
  applicationName: "copyback-seed",
});
try {
  const result = await seedDemo(prisma, { instanceRoot });
  process.stdout.write(
    result.created
      ? `Seeded the demo company ${result.companyId} (workspace under ${instanceRoot}/workspaces/acme-main).\n`
      : `The demo company ${result.companyId} already exists; nothing changed.\n`,
  );
} catch (error) {
  process.stderr.write(`seed failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await prisma.$disconnect();
  await database.stop();
}
