// The open statuses as an SQL list, for raw queries: `ra.status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL}`.
// Written as literals, not bound parameters: the partial indexes' predicate is
// `status IN ('active', 'escalated')`, and only a literal list lets the planner prove a query's
// condition implies it (to use the index, and to infer the unique index in ON CONFLICT).
import { Prisma } from "@copyback/db/client";
import { OPEN_RECOVERY_ACTION_STATUSES } from "./open-statuses";

export const OPEN_RECOVERY_ACTION_STATUSES_SQL: Prisma.Sql = Prisma.raw(`(${OPEN_RECOVERY_ACTION_STATUSES.map((status) => `'${status}'`).join(", ")})`);
