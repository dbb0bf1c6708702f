// pnpm --filter @copyback/db migrate [-- --database-url postgresql://...]
// Applies pending migrations to DATABASE_URL (what `prisma migrate deploy` does).
import { applyMigrations } from "../migrate/apply-migrations";
import { MigrationError } from "../migrate/errors";
import { cliEnv } from "./env";
import { fail, parseFlags } from "./args";

const flags = parseFlags(process.argv.slice(2), ["database-url"]);
const databaseUrl = flags["database-url"] ?? cliEnv().DATABASE_URL;
if (!databaseUrl) fail("migrate needs DATABASE_URL (or --database-url).");

try {
  const { applied } = await applyMigrations(databaseUrl);
  process.stdout.write(
    applied.length === 0
      ? "No pending migrations.\n"
      : `Applied:\n${applied.map((name) => `  ${name}\n`).join("")}`,
  );
} catch (error) {
  fail(error instanceof MigrationError ? `${error.code}: ${error.message}` : String(error));
}
