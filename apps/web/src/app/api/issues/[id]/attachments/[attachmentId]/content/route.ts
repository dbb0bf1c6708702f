import { getAttachmentContentRoute } from "~/server/rest/handlers/get-attachment-content";

export const dynamic = "force-dynamic";
export const GET = getAttachmentContentRoute.handle;
