// The application's Prisma client: adapter-pg over one pg Pool of a fixed size.
// One client per process (web, worker); tests make one per test database.
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client";

export interface PrismaClientOptions {
  databaseUrl: string;
  /** Maximum connections of the pool. Advisory-lock holders use dedicated connections instead (R-OWN-6). */
  poolSize: number;
  /** Shown in pg_stat_activity, so operators can tell web, worker and tests apart. */
  applicationName?: string;
}

export function createPrismaClient(options: PrismaClientOptions): PrismaClient {
  if (!Number.isInteger(options.poolSize) || options.poolSize < 1) {
    throw new RangeError(`poolSize must be a positive integer (got ${options.poolSize})`);
  }
  const adapter = new PrismaPg({
    connectionString: options.databaseUrl,
    max: options.poolSize,
    ...(options.applicationName ? { application_name: options.applicationName } : {}),
  });
  return new PrismaClient({ adapter });
}
