import { listAttachmentsRoute } from "~/server/rest/handlers/list-attachments";
import { uploadAttachmentRoute } from "~/server/rest/handlers/upload-attachment";

export const dynamic = "force-dynamic";
export const GET = listAttachmentsRoute.handle;
export const POST = uploadAttachmentRoute.handle;
