import { finishRunRoute } from "~/server/rest/handlers/finish-run";

export const dynamic = "force-dynamic";
export const POST = finishRunRoute.handle;
