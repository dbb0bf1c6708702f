// The name an uploaded attachment is stored and offered under (pure). A name is shown on the task
// page, sent back in Content-Disposition and given to the reconstruction's agent (R-RC-5), so it
// is never a path: any directory part a client sends (`../x`, `C:\dir\x`) is dropped, and a name
// that is empty after that, or carries control characters (a header or terminal injection), is
// refused rather than repaired.

export type FileNameDecision =
  | { kind: "accept"; fileName: string }
  | { kind: "reject"; code: "file_name_missing" | "file_name_invalid" | "file_name_too_long"; message: string };

/** Longest stored name, in UTF-16 units (a filesystem's 255 bytes leaves room for this). */
export const MAX_FILE_NAME_LENGTH = 200;

// C0 controls, DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export function decideAttachmentFileName(raw: string | null | undefined): FileNameDecision {
  if (raw === null || raw === undefined) return { kind: "reject", code: "file_name_missing", message: "Name the file (the X-File-Name header, or the filename of the form's file part)." };
  if (CONTROL.test(raw)) return { kind: "reject", code: "file_name_invalid", message: "The file name contains control characters." };
  // Both separators: a browser on Windows may send a full path.
  const base = raw.split(/[/\\]/).pop()!.trim();
  if (base === "" || base === "." || base === "..") return { kind: "reject", code: "file_name_missing", message: "The file name is empty once its folder part is removed." };
  if (base.length > MAX_FILE_NAME_LENGTH) return { kind: "reject", code: "file_name_too_long", message: `The file name is longer than ${MAX_FILE_NAME_LENGTH} characters.` };
  return { kind: "accept", fileName: base };
}
