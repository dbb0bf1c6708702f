// PostgreSQL's internal one-byte `"char"` type (oid 18), for the schema engine's connections.
//
// The engine's introspection selects catalog columns of that type (pg_constraint.contype,
// confdeltype, confupdtype) and reads them as characters, as the native engine's driver
// returns them. adapter-pg has no mapping for oid 18: it throws "Column type 'char' could not
// be deserialized" for the whole query. So:
//   1. `CharColumnMarkingClient` (a pg.Client used by the engine's pool only) reports such a
//      column as `text`, which adapter-pg accepts, and tags its name with a marker;
//   2. `restoreCharColumns` (applied to adapter-pg's query result) removes the tag and types
//      the column as the driver-adapter `Character` the engine expects.
// The tag travels with each result, so concurrent queries cannot mix their columns up. The
// value itself is a one-character string in both cases.
import pg from "pg";
import { ColumnTypeEnum, type SqlResultSet } from "@prisma/driver-adapter-utils";

const PG_INTERNAL_CHAR_OID = 18;
const PG_TEXT_OID = 25;
// A NUL cannot occur in a PostgreSQL identifier, so no real column name ends with this.
const CHAR_MARKER = "\u0000copyback-internal-char";

interface FieldsCarrier {
  fields?: Array<{ name: string; dataTypeID: number }>;
}

function markCharColumns<T>(result: T): T {
  const results = Array.isArray(result) ? (result as unknown[]) : [result];
  for (const one of results) {
    for (const field of (one as FieldsCarrier | null)?.fields ?? []) {
      if (field.dataTypeID === PG_INTERNAL_CHAR_OID) {
        field.dataTypeID = PG_TEXT_OID;
        field.name += CHAR_MARKER;
      }
    }
  }
  return result;
}

/** Types the columns `CharColumnMarkingClient` tagged as `Character` and restores their names. */
export function restoreCharColumns(result: SqlResultSet): SqlResultSet {
  result.columnNames.forEach((name, index) => {
    if (!name.endsWith(CHAR_MARKER)) return;
    result.columnNames[index] = name.slice(0, -CHAR_MARKER.length);
    result.columnTypes[index] = ColumnTypeEnum.Character;
  });
  return result;
}

type Callback = (error: Error | null, result: unknown) => void;

/** A pg.Client whose query results describe `"char"` columns as tagged `text` columns. */
export class CharColumnMarkingClient extends pg.Client {
  // pg's query() has many overloads; this override forwards all of them unchanged and only
  // post-processes the result (promise or callback form). Submittables (cursors) pass through.
  override query(...args: unknown[]): never {
    const forward = super.query.bind(this) as (...a: unknown[]) => unknown;
    const [config, values, callback] = args;
    if (typeof (config as { submit?: unknown } | null)?.submit === "function") {
      return forward(...args) as never;
    }
    const cb = (typeof values === "function" ? values : callback) as Callback | undefined;
    if (cb) {
      const wrapped: Callback = (error, result) =>
        cb(error, error ? result : markCharColumns(result));
      return (
        typeof values === "function" ? forward(config, wrapped) : forward(config, values, wrapped)
      ) as never;
    }
    return (forward(...args) as Promise<unknown>).then(markCharColumns) as never;
  }
}
