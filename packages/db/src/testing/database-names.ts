// Names of the databases the harness creates. Many vitest runs (one per package, run in parallel
// by turbo) share one server, so every name is unique per run and per file; the creation time is
// part of the name so a later run can recognise what a killed run left behind.
import { randomBytes } from "node:crypto";

export type HarnessDatabaseKind = "template" | "test" | "scratch";

const PATTERN = /^copyback_(template|test|scratch)_([0-9a-z]+)_([0-9a-f]{8})$/;

export function harnessDatabaseName(kind: HarnessDatabaseKind, now: number = Date.now()): string {
  return `copyback_${kind}_${now.toString(36)}_${randomBytes(4).toString("hex")}`;
}

/** When a harness database was created, or undefined for any other database. */
export function harnessDatabaseCreatedAt(name: string): number | undefined {
  const match = PATTERN.exec(name);
  if (!match?.[2]) return undefined;
  const created = Number.parseInt(match[2], 36);
  return Number.isSafeInteger(created) ? created : undefined;
}

/** Abandoned = made by the harness more than `maxAgeMs` ago (no run lasts that long). */
export function isAbandonedHarnessDatabase(name: string, now: number, maxAgeMs: number): boolean {
  const created = harnessDatabaseCreatedAt(name);
  return created !== undefined && now - created > maxAgeMs;
}
