import { stopRunRoute } from "~/server/rest/handlers/stop-run";

export const dynamic = "force-dynamic";
export const POST = stopRunRoute.handle;
