// The browser side of POST /api/issues/:id/attachments: the file's bytes as the body, its name
// percent-encoded in X-File-Name (header values are not UTF-8). XMLHttpRequest rather than fetch:
// only it reports upload progress. Errors come back as the route's `{ code, message }`.

export interface UploadProgress {
  loaded: number;
  total: number;
}

export type UploadOutcome = { ok: true; id: string } | { ok: false; message: string };

export function uploadAttachment(issueId: string, file: File, onProgress: (p: UploadProgress) => void): Promise<UploadOutcome> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/issues/${issueId}/attachments`);
    xhr.setRequestHeader("content-type", file.type || "application/octet-stream");
    xhr.setRequestHeader("x-file-name", encodeURIComponent(file.name));
    xhr.upload.onprogress = (event) => onProgress({ loaded: event.loaded, total: event.lengthComputable ? event.total : file.size });
    xhr.onload = () => {
      const body = parse(xhr.responseText);
      if (xhr.status === 201 && typeof body?.id === "string") resolve({ ok: true, id: body.id });
      else resolve({ ok: false, message: messageOf(xhr.status, body) });
    };
    xhr.onerror = () => resolve({ ok: false, message: "The upload did not reach the server. Check the connection and try again." });
    xhr.send(file);
  });
}

function parse(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The route's own sentence for the refusals written for people; a generic line otherwise. */
export function messageOf(status: number, body: Record<string, unknown> | null): string {
  if (status === 401) return "Your session has ended. Sign in again.";
  if (typeof body?.message === "string" && status >= 400 && status < 500) return body.message;
  if (status === 413) return "The file is too large to attach.";
  return "The upload failed. Try again in a moment.";
}
