// Small text renderers for the CLI's human output.

/** Left-aligned columns, two spaces apart; the last column is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = headers.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    "  " +
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)];
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value >= 100 ? 0 : 1)} ${units[unit]}`;
}

/** At most `max` items, then "... and N more". */
export function capped(items: readonly string[], max: number, indent = "    "): string[] {
  const shown = items.slice(0, max).map((item) => `${indent}${item}`);
  if (items.length > max)
    shown.push(`${indent}... and ${items.length - max} more (--json lists all)`);
  return shown;
}
