// pnpm --filter @copyback/db migration:create -- --name add_x [--database-url postgresql://...]
// Diffs the existing migrations (replayed on a throwaway database of that server) against
// prisma/schema.prisma and writes prisma/migrations/<timestamp>_<name>/migration.sql.
import { createMigration } from "../migrate/create-migration";
import { MigrationError } from "../migrate/errors";
import { cliEnv } from "./env";
import { fail, parseFlags } from "./args";

const flags = parseFlags(process.argv.slice(2), ["name", "database-url"]);
const serverUrl = flags["database-url"] ?? cliEnv().DATABASE_URL;
if (!flags.name)
  fail("Usage: migration:create -- --name <snake_case_name> [--database-url <postgresql url>]");
if (!serverUrl)
  fail(
    "migration:create needs a PostgreSQL server to replay migrations on: set DATABASE_URL or pass --database-url.",
  );

try {
  const result = await createMigration({ serverUrl, name: flags.name });
  if (result.kind === "up_to_date") {
    process.stdout.write("The migrations already produce schema.prisma; nothing to create.\n");
  } else {
    process.stdout.write(`Created ${result.folder}\n\n${result.sql}`);
  }
} catch (error) {
  fail(error instanceof MigrationError ? `${error.code}: ${error.message}` : String(error));
}
