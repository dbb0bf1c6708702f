// A real dropped connection at one chosen statement: a trigger on `table` whose first `times`
// firings (for rows matching `when`) make the backend running the statement terminate itself
// (pg_terminate_backend(pg_backend_pid()): FATAL 57P01 mid-statement, the socket closed, as a
// server restart or an administrator's termination does). The transaction it was in is gone.
import type { PrismaClient } from "@copyback/db";

export interface TerminateOptions {
  event?: "INSERT" | "UPDATE";
  times?: number;
}

let installed = 0;

/** Installs the trigger; returns its removal. */
export async function terminateConnectionOn(db: PrismaClient, table: string, when: string, options: TerminateOptions = {}): Promise<() => Promise<void>> {
  installed += 1;
  const name = `copyback_test_outage_${process.pid}_${installed}`;
  await db.$executeRawUnsafe(`CREATE SEQUENCE ${name}_seq`);
  await db.$executeRawUnsafe(`
    CREATE FUNCTION ${name}() RETURNS trigger AS $$
    BEGIN
      IF nextval('${name}_seq') <= ${options.times ?? 1} THEN
        PERFORM pg_terminate_backend(pg_backend_pid());
        PERFORM pg_sleep(5); -- ends at the next interrupt check: FATAL 57P01, the connection gone
      END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql`);
  await db.$executeRawUnsafe(`CREATE TRIGGER ${name} BEFORE ${options.event ?? "UPDATE"} ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${name}()`);
  return async () => {
    await db.$executeRawUnsafe(`DROP TRIGGER ${name} ON ${table}`);
    await db.$executeRawUnsafe(`DROP FUNCTION ${name}()`);
    await db.$executeRawUnsafe(`DROP SEQUENCE ${name}_seq`);
  };
}
