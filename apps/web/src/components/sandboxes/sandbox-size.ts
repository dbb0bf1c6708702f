// How the Retained sandboxes page states a sandbox's size (pure, so it is unit-tested): the bytes
// in human units where the provider told (measured after the sandbox's stop), "at least" when the
// measurement was cut short by its budget or an unreadable directory, "size unknown" otherwise.
import { formatBytes } from "~/components/format/bytes";

export interface SandboxSize {
  bytes: number;
  entries: number;
  workspaceBytes: number;
  lowerBound: "time_budget" | "entry_budget" | "unreadable" | null;
}

const WHY_SHORT: Record<NonNullable<SandboxSize["lowerBound"]>, string> = {
  time_budget: "the measurement ran out of time",
  entry_budget: "the measurement stopped at its entry limit",
  unreadable: "a directory could not be read",
};

/** The short text beside the row's age: "4.2 MB", "at least 1.3 GB" or "size unknown". */
export function sandboxSizeText(size: SandboxSize | null): string {
  if (size === null) return "size unknown";
  return size.lowerBound === null ? formatBytes(size.bytes) : `at least ${formatBytes(size.bytes)}`;
}

/** Its tooltip: entries, the workspace's share, and why a lower bound is one. */
export function sandboxSizeDetail(size: SandboxSize | null): string {
  if (size === null) return "The provider does not tell this sandbox's size, or it was not measured.";
  const entries = `${size.entries.toLocaleString("en-US")} entr${size.entries === 1 ? "y" : "ies"}`;
  const parts = [`${entries}; the workspace holds ${formatBytes(size.workspaceBytes)}`];
  if (size.lowerBound !== null) parts.push(`a lower bound: ${WHY_SHORT[size.lowerBound]}`);
  return `${parts.join("; ")}.`;
}
