// What the launcher sets up before its children, in one call from launch.ts:
//  - the database: DATABASE_URL's server, or the embedded PostgreSQL under supervision (a server
//    that dies is restarted with backoff, said in one line; web and worker reconnect on their own);
//  - whether agents run isolated, said once (scripts/launch/isolation.ts).
import { mkdir } from "node:fs/promises";
import { resolveDatabase, type ResolvedDatabase } from "@copyback/db";
import { announceIsolation } from "./isolation";
import type { LaunchEnv } from "./env";

export async function prepareInstance(env: LaunchEnv, say: (message: string) => void): Promise<ResolvedDatabase> {
  // The instance root first: with DATABASE_URL nothing else creates it before the isolation
  // report is written there (a second host's first start said "could not record the host's
  // isolation": ENOENT). Private, like everything under it.
  await mkdir(env.COPYBACK_HOME, { recursive: true, mode: 0o700 });
  const database = await resolveDatabase({
    databaseUrl: env.DATABASE_URL,
    instanceRoot: env.COPYBACK_HOME,
    port: env.COPYBACK_DB_PORT,
    migrate: true,
    supervise: say,
  });
  try {
    await announceIsolation(env.COPYBACK_HOME, say);
  } catch (error) {
    await database.stop();
    throw error;
  }
  return database;
}
