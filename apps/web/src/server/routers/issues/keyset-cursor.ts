// Keyset pagination over (timestamp DESC, id DESC): a page starts strictly after the last row of
// the previous one, so deep pages cost the same as the first (no OFFSET scans over 10,000 rows).
// The cursor is opaque to clients: base64url of "<iso timestamp>|<uuid>".
import { z } from "zod";

export interface KeysetPosition {
  at: Date;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(`${position.at.toISOString()}|${position.id}`, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): KeysetPosition | null {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const [iso, id, ...rest] = text.split("|");
  if (!iso || !id || rest.length > 0 || !UUID.test(id)) return null;
  const at = new Date(iso);
  if (Number.isNaN(at.getTime()) || at.toISOString() !== iso) return null;
  return { at, id };
}

/** A cursor input: a malformed cursor is a BAD_REQUEST (zod), never a silent first page. */
export const cursorSchema = z
  .string()
  .max(200)
  .transform((value, ctx) => {
    const position = decodeCursor(value);
    if (!position) {
      ctx.addIssue({ code: "custom", message: "Invalid page cursor." });
      return z.NEVER;
    }
    return position;
  });

/** Splits `limit + 1` fetched rows into the page and the next cursor (null on the last page). */
export function pageOf<T extends { id: string }>(
  rows: T[],
  limit: number,
  at: (row: T) => Date,
): { items: T[]; nextCursor: string | null } {
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1]!;
  return { items, nextCursor: encodeCursor({ at: at(last), id: last.id }) };
}
