// Diffs through the schema engine: the SQL that takes a source schema to schema.prisma.
import { PRISMA_DIR, SCHEMA_PATH, readPrismaSchema } from "../schema/paths";
import { driftSteps, type MigrationStep } from "../schema/hand-written";
import { NO_SCHEMA_FILTER, withSchemaEngine } from "./wasm-schema-engine";

export interface SchemaSource {
  /** Defaults to this package's prisma/schema.prisma. */
  schemaPath?: string;
}

async function schemaFiles(source: SchemaSource) {
  const schemaPath = source.schemaPath ?? SCHEMA_PATH;
  return [{ path: schemaPath, content: await readPrismaSchema(schemaPath) }];
}

/**
 * The SQL script that takes the live database at `databaseUrl` to schema.prisma, as the
 * engine writes it (hand-written objects included: see `driftFromSchema`).
 */
export async function diffDatabaseToSchema(
  databaseUrl: string,
  source: SchemaSource = {},
): Promise<string> {
  const files = await schemaFiles(source);
  const result = await withSchemaEngine({ databaseUrl, schemaFiles: files }, (engine) =>
    engine.diff({
      from: { tag: "schemaDatasource", files, configDir: PRISMA_DIR },
      to: { tag: "schemaDatamodel", files },
      script: true,
      exitCode: null,
      filters: NO_SCHEMA_FILTER,
    }),
  );
  return result.stdout ?? "";
}

/** The steps by which the live database differs from schema.prisma, hand-written objects excepted. */
export async function driftFromSchema(
  databaseUrl: string,
  source: SchemaSource = {},
): Promise<MigrationStep[]> {
  return driftSteps(await diffDatabaseToSchema(databaseUrl, source));
}
