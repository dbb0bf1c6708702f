// Where the Prisma schema and the migrations folder live. Resolved from this file so that every
// caller (CLI, launcher, worker, tests) finds them regardless of its working directory.
import { fileURLToPath } from "node:url";
import { readFile } from "node:fs/promises";

export const PRISMA_DIR = fileURLToPath(new URL("../../prisma/", import.meta.url));
export const SCHEMA_PATH = fileURLToPath(new URL("../../prisma/schema.prisma", import.meta.url));
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../prisma/migrations/", import.meta.url));

export async function readPrismaSchema(schemaPath: string = SCHEMA_PATH): Promise<string> {
  return readFile(schemaPath, "utf8");
}
