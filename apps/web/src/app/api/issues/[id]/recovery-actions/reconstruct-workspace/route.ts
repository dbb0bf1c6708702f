import { reconstructWorkspaceRoute } from "~/server/rest/handlers/reconstruct-workspace";

export const dynamic = "force-dynamic";
export const POST = reconstructWorkspaceRoute.handle;
