// The CLI's argument parsers (commander's custom option and argument processing): each refuses
// a malformed value with InvalidArgumentError, which commander reports as a usage error (exit 2).
import { InvalidArgumentError } from "commander";

/** A repeatable option's values, in the order given. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function milliseconds(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n))
    throw new InvalidArgumentError("expected a whole number of milliseconds");
  return n;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function uuid(value: string): string {
  if (!UUID.test(value)) throw new InvalidArgumentError("expected an id (a UUID)");
  return value.toLowerCase();
}

export function wholeNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError("expected a whole number");
  return n;
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError("expected a whole number of at least 1");
  return n;
}
