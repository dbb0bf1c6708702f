import { retryWorkspaceExportRoute } from "~/server/rest/handlers/retry-workspace-export";

export const dynamic = "force-dynamic";
export const POST = retryWorkspaceExportRoute.handle;
