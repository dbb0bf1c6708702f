import { resumeWorkspaceFinalizationRoute } from "~/server/rest/handlers/resume-workspace-finalization";

export const dynamic = "force-dynamic";
export const POST = resumeWorkspaceFinalizationRoute.handle;
