// Minimal flag parsing for the db CLIs (`--name x`, `--name=x`), on node:util's parseArgs.
import { parseArgs } from "node:util";

export function parseFlags<const T extends readonly string[]>(
  argv: readonly string[],
  names: T,
): Partial<Record<T[number], string>> {
  const options = Object.fromEntries(names.map((name) => [name, { type: "string" as const }]));
  // pnpm forwards a literal `--` before script arguments; it is not a flag.
  const args = argv.filter((arg) => arg !== "--");
  const { values } = parseArgs({ args, options, strict: true, allowPositionals: false });
  return values as Partial<Record<T[number], string>>;
}

export function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
