import "server-only";
import { createPrismaClient, type PrismaClient } from "@copyback/db/client";
import { env } from "~/env";

// One client per server process; kept on globalThis so dev-mode reloads do not leak pools.
const holder = globalThis as unknown as { copybackPrisma?: PrismaClient };

export function db(): PrismaClient {
  holder.copybackPrisma ??= createPrismaClient({
    databaseUrl: env().DATABASE_URL,
    poolSize: env().DATABASE_POOL_SIZE,
    applicationName: "copyback-web",
  });
  return holder.copybackPrisma;
}
