// R-RC-5: the names of a sandbox's input files (providers/types.ts `placeInputs`), pure. An input
// lives at `<folder>/<file name>` below the sandbox's inputs directory (the caller builds that path
// from an attachment's id and its stored file name, inputFileName) or, for a file that is no
// attachment (the reconstruction context), directly in it as `<file name>`; every provider checks it
// again (checkInputRelativePath) before it writes anything: whatever a name holds, an input can
// never land outside the inputs directory, above it or on top of another input.
import { DomainError } from "../errors";

/** A path component of at most this many UTF-8 bytes (the usual file-system limit). */
export const MAX_INPUT_NAME_BYTES = 255;

// C0 controls, DEL and C1 controls (as attachments/file-name.ts refuses them at upload).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/gu;

function safeComponent(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !name.includes("/") && !name.includes("\\") && !CONTROL.test(name) && Buffer.byteLength(name, "utf8") <= MAX_INPUT_NAME_BYTES;
}

/** Cuts `text` to at most `bytes` UTF-8 bytes without splitting a character. */
function cutUtf8(text: string, bytes: number): string {
  let out = "";
  for (const ch of text) {
    if (Buffer.byteLength(out + ch, "utf8") > bytes) break;
    out += ch;
  }
  return out;
}

/**
 * A file name usable as one path component, as close to the stored name as possible: folder
 * separators and control characters become `_`, "." and ".." and the empty name become
 * `attachment`, and a name too long keeps its extension (up to 32 bytes) and loses its middle.
 */
export function inputFileName(stored: string | null): string {
  let name = (stored ?? "").replace(/[/\\]/g, "_").replace(CONTROLS, "_");
  if (name === "" || name === "." || name === "..") return "attachment";
  if (Buffer.byteLength(name, "utf8") > MAX_INPUT_NAME_BYTES) {
    const dot = name.lastIndexOf(".");
    const ext = dot > 0 && Buffer.byteLength(name.slice(dot), "utf8") <= 32 ? name.slice(dot) : "";
    name = cutUtf8(name.slice(0, ext ? dot : name.length), MAX_INPUT_NAME_BYTES - Buffer.byteLength(ext, "utf8")) + ext;
  }
  return name;
}

/** `<folder>/<file name>`, both components safe (the folder is an attachment's id). */
export function inputRelativePath(folder: string, storedName: string | null): string {
  const path = `${folder}/${inputFileName(storedName)}`;
  checkInputRelativePath(path);
  return path;
}

/**
 * Refuses (provider_input_path_invalid) anything but one or two safe components: `<folder>/<file
 * name>` (an attachment's copy) or a file directly in the inputs directory (`<file name>`, the
 * reconstruction context). Returns the components.
 */
export function checkInputRelativePath(path: string): [string] | [string, string] {
  const parts = path.split("/");
  if ((parts.length !== 1 && parts.length !== 2) || !parts.every(safeComponent)) {
    throw new DomainError("invalid", "provider_input_path_invalid", `Not a usable input path: ${JSON.stringify(path)}.`);
  }
  return parts as [string] | [string, string];
}

/**
 * Every path checked, no two inputs at the same path, and no file directly in the inputs directory
 * named like another input's folder (the provider refuses before writing).
 */
export function checkInputPaths(paths: readonly string[]): void {
  const seen = new Set<string>();
  const files = new Set<string>();
  const folders = new Set<string>();
  for (const path of paths) {
    const parts = checkInputRelativePath(path);
    if (seen.has(path)) throw new DomainError("invalid", "provider_input_path_invalid", `Two inputs at ${JSON.stringify(path)}.`);
    seen.add(path);
    (parts.length === 1 ? files : folders).add(parts[0]);
  }
  for (const file of files) {
    if (folders.has(file)) throw new DomainError("invalid", "provider_input_path_invalid", `The input ${JSON.stringify(file)} is also another input's folder.`);
  }
}
