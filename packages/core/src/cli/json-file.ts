// A JSON input file named on the command line: missing, unreadable or not JSON is a usage error
// (exit 2) that names the file, never its content: it may be a configuration someone pasted a
// key into, and Node's JSON.parse message quotes the text around the error.
import { readFile } from "node:fs/promises";
import { CliError } from "./errors";
import { EXIT } from "./exit-codes";
import { requireFile } from "./input-files";

export async function readJsonFile(file: string, what: string): Promise<unknown> {
  await requireFile(file, what);
  const text = await readFile(file, "utf8");
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(EXIT.usage, "invalid_request", `${what} ${file} is not valid JSON; nothing written.`);
  }
}
