// The two multipart bodies of Daytona's toolbox: uploads arrive as
// `files[i].path` + `files[i].file` fields; bulk downloads answer one `file` part per
// path (filename = the requested path) or an `error` part with a JSON error.
import { randomBytes } from "node:crypto";

export interface FormPart {
  name: string;
  filename?: string;
  data: Buffer;
}

export function boundaryOf(contentType: string | undefined): string | undefined {
  const match = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType ?? "");
  return match ? (match[1] ?? match[2])?.trim() : undefined;
}

/** Splits a whole multipart body into its parts; throws on a malformed body. */
export function parseMultipart(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let start = body.indexOf(delimiter);
  if (start < 0) throw new Error("multipart body has no boundary");
  for (;;) {
    start += delimiter.length;
    if (body.subarray(start, start + 2).toString() === "--") return parts;
    const headerEnd = body.indexOf("\r\n\r\n", start);
    if (headerEnd < 0) throw new Error("multipart part without headers");
    const headers = body.subarray(start, headerEnd).toString("utf8");
    const next = body.indexOf(Buffer.concat([Buffer.from("\r\n"), delimiter]), headerEnd + 4);
    if (next < 0) throw new Error("multipart body is truncated");
    const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? "";
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) throw new Error("multipart part without a name");
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    parts.push({ name, filename, data: body.subarray(headerEnd + 4, next) });
    start = next + 2;
  }
}

export function newBoundary(): string {
  return `daytona-emulator-${randomBytes(12).toString("hex")}`;
}

export function partHeader(boundary: string, name: string, filename: string, contentType: string, length: number): Buffer {
  return Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename.replace(/"/g, "%22")}"\r\n` +
      `Content-Type: ${contentType}\r\nContent-Length: ${length}\r\n\r\n`,
  );
}

export function closing(boundary: string): Buffer {
  return Buffer.from(`--${boundary}--\r\n`);
}
