// A crash inside the WASM schema engine fails the call at once with the panic text, and the
// process refuses to use the crashed instance again. (Its own file: it poisons this process.)
import { describe, expect, it } from "vitest";
import { withSchemaEngine } from "../src/migrate/wasm-schema-engine";
import { MigrationError } from "../src/migrate/errors";
import { applyMigrations } from "../src/migrate/apply-migrations";
import { useScratchDatabase } from "./support/scratch-database";

describe("schema engine panics", () => {
  const db = useScratchDatabase();

  it("fails the call with the panic message instead of hanging, then refuses further use", async () => {
    const error = await withSchemaEngine({ databaseUrl: db.url() }, async (engine) => {
      engine.debugPanic();
      return "not reached";
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as MigrationError).code).toBe("engine_panicked");

    const again = await applyMigrations(db.url()).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(MigrationError);
    expect((again as MigrationError).code).toBe("engine_panicked");
    expect((again as MigrationError).message).toMatch(/restart the process/);
  });
});
