// An empty, uniquely named database for tests of migrations themselves, dropped afterwards.
// Delegates to the shared harness (src/testing), which knows the run's server: the machine's
// PostgreSQL when COPYBACK_TEST_DATABASE_URL/DATABASE_URL is set, else an embedded one.
import { afterAll, beforeAll } from "vitest";
import { createScratchDatabase, type ScratchDatabase } from "../../src/testing/index";

export type { ScratchDatabase };
export { createScratchDatabase };

/** beforeAll/afterAll hooks around one scratch database for the whole file. */
export function useScratchDatabase(): { url(): string; name(): string } {
  let database: ScratchDatabase | undefined;
  beforeAll(async () => {
    database = await createScratchDatabase();
  });
  afterAll(async () => {
    await database?.drop();
    database = undefined;
  });
  const ready = (): ScratchDatabase => {
    if (!database) throw new Error("useScratchDatabase(): use the database inside tests or hooks");
    return database;
  };
  return { url: () => ready().url, name: () => ready().name };
}
