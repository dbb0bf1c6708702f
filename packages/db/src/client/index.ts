export * from "../generated/prisma/client";
export { createPrismaClient, type PrismaClientOptions } from "./create-prisma-client";
export {
  openDedicatedConnection,
  type DedicatedConnection,
  type DedicatedConnectionOptions,
} from "./dedicated-connection";
export {
  selectForUpdateSkipLocked,
  withTransaction,
  type IsolationLevel,
  type TransactionClient,
  type TransactionOptions,
} from "./transactions";
export { probeQuery, type ReadinessProbe } from "./probe-query";
