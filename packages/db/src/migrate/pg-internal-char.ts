// adapter-pg maps every PostgreSQL type a query returns to a Prisma column type and throws on
// PostgreSQL's internal one-byte `"char"` type (oid 18). The schema engine's introspection
// selects catalog columns of that type (pg_class.relkind, pg_constraint.contype, ...), so
// without this every diff or `devDiagnostic` against a live database fails with
// "Column type 'char' could not be deserialized". The value arrives as a one-character string
// either way; reporting the column as `text` (oid 25) is exactly what the engine expects.
// Used only for the schema engine's connections, never for the application's pool.
import pg from "pg";

const PG_INTERNAL_CHAR_OID = 18;
const PG_TEXT_OID = 25;

interface FieldsCarrier {
  fields?: Array<{ dataTypeID: number }>;
}

function reportCharAsText<T>(result: T): T {
  const results = Array.isArray(result) ? (result as unknown[]) : [result];
  for (const one of results) {
    for (const field of (one as FieldsCarrier | null)?.fields ?? []) {
      if (field.dataTypeID === PG_INTERNAL_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
    }
  }
  return result;
}

type Callback = (error: Error | null, result: unknown) => void;

/** A pg.Client whose query results describe `"char"` columns as `text`. */
export class InternalCharAsTextClient extends pg.Client {
  // pg's query() has many overloads; this override forwards all of them unchanged and only
  // post-processes the result (promise or callback form). Submittables (cursors) pass through.
  override query(...args: unknown[]): never {
    const forward = super.query.bind(this) as (...a: unknown[]) => unknown;
    const [config, values, callback] = args;
    if (typeof (config as { submit?: unknown } | null)?.submit === "function")
      return forward(...args) as never;
    const cb = (typeof values === "function" ? values : callback) as Callback | undefined;
    if (cb) {
      const wrapped: Callback = (error, result) =>
        cb(error, error ? result : reportCharAsText(result));
      return (
        typeof values === "function" ? forward(config, wrapped) : forward(config, values, wrapped)
      ) as never;
    }
    return (forward(...args) as Promise<unknown>).then(reportCharAsText) as never;
  }
}
