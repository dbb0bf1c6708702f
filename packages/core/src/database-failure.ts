// Whether an error is the database's own failure (a dropped or refused connection, a restarting
// server), as opposed to a domain refusal, a provider's or the file system's error. Finalization
// uses it to leave an interrupted copyback to the reconciler; dispatch uses it to put a run whose
// agent never started back in the queue (dispatch/requeue-after-database-failure.ts).

/**
 * True for an error of the database client itself (Prisma's P1xxx/P2xxx request errors, which
 * wrap PostgreSQL errors such as 57P01 "terminating connection"), never for a copyback or
 * provider error: those have their own classification (decideCopybackFailure).
 */
export function isDatabaseFailure(error: unknown): boolean {
  const e = error as { name?: unknown; code?: unknown } | null;
  if (typeof e !== "object" || e === null) return false;
  const prismaError = typeof e.name === "string" && e.name.startsWith("PrismaClient");
  return prismaError && (typeof e.code !== "string" || /^P[12]\d{3}$/.test(e.code));
}

/**
 * The database failure an error is or wraps (its `cause` chain, e.g. a preparation failure that
 * carries the write that failed), or null. A wrapper's own meaning is not inspected: the caller
 * decides which wrappers may be looked through.
 */
export function databaseFailureIn(error: unknown): unknown {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if (isDatabaseFailure(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}
