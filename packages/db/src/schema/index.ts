export { MIGRATIONS_DIR, PRISMA_DIR, SCHEMA_PATH, readPrismaSchema } from "./paths";
export {
  HAND_WRITTEN_INDEXES,
  HAND_WRITTEN_TRIGGERS,
  driftSteps,
  splitMigrationSteps,
  type HandWrittenIndex,
  type HandWrittenTrigger,
  type MigrationStep,
} from "./hand-written";
