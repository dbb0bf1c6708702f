import { listRecoveryActionsRoute } from "~/server/rest/handlers/list-recovery-actions";

export const dynamic = "force-dynamic";
export const GET = listRecoveryActionsRoute.handle;
