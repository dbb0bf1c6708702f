import { resolveRecoveryActionRoute } from "~/server/rest/handlers/resolve-recovery-action";

export const dynamic = "force-dynamic";
export const POST = resolveRecoveryActionRoute.handle;
