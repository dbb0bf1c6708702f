// Client-safe ("use client" components): pure constants and types only, nothing of the server.
export { DEFAULT_MAX_ATTACHMENT_BYTES } from "../attachments/limits";
