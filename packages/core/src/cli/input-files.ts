// Input files named on the command line: a missing or unreadable one is a usage error (exit 2),
// reported with the path the operator typed.
import { readFile, stat } from "node:fs/promises";
import { parseManifest } from "../copyback/manifest/index";
import type { Manifest } from "../copyback/manifest/index";
import { messageOf } from "../errors";
import { CliError } from "./errors";
import { EXIT } from "./exit-codes";

export async function requireFile(file: string, what: string): Promise<void> {
  let st;
  try {
    st = await stat(file);
  } catch (error) {
    throw new CliError(
      EXIT.usage,
      "input_unreadable",
      `${what} ${file} cannot be read (${errnoOf(error)}).`,
    );
  }
  if (!st.isFile())
    throw new CliError(EXIT.usage, "input_unreadable", `${what} ${file} is not a regular file.`);
}

export async function requireDirectory(dir: string, what: string): Promise<void> {
  let st;
  try {
    st = await stat(dir);
  } catch (error) {
    throw new CliError(
      EXIT.usage,
      "input_unreadable",
      `${what} ${dir} cannot be read (${errnoOf(error)}).`,
    );
  }
  if (!st.isDirectory())
    throw new CliError(EXIT.usage, "input_unreadable", `${what} ${dir} is not a directory.`);
}

/** A baseline manifest file: JSON that parseManifest accepts (else exit 2, nothing touched). */
export async function readManifestFile(file: string): Promise<Manifest> {
  await requireFile(file, "The baseline manifest");
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new CliError(
      EXIT.usage,
      "invalid_manifest",
      `The baseline manifest ${file} is not valid JSON (${error instanceof Error ? error.message : "parse error"}).`,
    );
  }
  try {
    return parseManifest(value);
  } catch (error) {
    const message = messageOf(error);
    throw new CliError(
      EXIT.usage,
      "invalid_manifest",
      `The baseline manifest ${file} is refused: ${message}`,
    );
  }
}

function errnoOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "error";
}
