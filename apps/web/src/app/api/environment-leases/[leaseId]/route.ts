import { getEnvironmentLeaseRoute } from "~/server/rest/handlers/get-environment-lease";

export const dynamic = "force-dynamic";
export const GET = getEnvironmentLeaseRoute.handle;
