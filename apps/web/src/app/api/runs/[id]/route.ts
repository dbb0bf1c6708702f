import { getRunRoute } from "~/server/rest/handlers/get-run";

export const dynamic = "force-dynamic";
export const GET = getRunRoute.handle;
