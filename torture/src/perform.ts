// Performing one operation on the system as a history operation (history.ts): its invoke line,
// the call, then exactly one completion. The rule that tells a thrown error's completion lives here
// and only here: `fail` claims the operation certainly did not take effect, so it is given only to
// answers that say so; anything else is `info`, which the checker reads as "may or may not have
// happened" (checker/operations.ts).
import { isDomainError } from "@copyback/core/errors";
import type { History, Operation } from "./history";

/**
 * How a thrown error completes an operation: `fail` for a refusal of the product (a domain error
 * other than `unavailable`: a service decides its refusals before it writes), `info` for anything
 * else: a dropped connection, a restarting server, a timeout, a provider's error mid-call. An
 * operation whose service can refuse after it acted (a Discard past its admission) narrows the
 * refusals with `refusal`.
 */
export function completionOfError(error: unknown, refusal: (code: string) => boolean = () => true): "fail" | "info" {
  return isDomainError(error) && error.kind !== "unavailable" && refusal(error.code) ? "fail" : "info";
}

/** What a completion records of an error: its code (a domain or Prisma code, an errno) and the start of its message. */
export function errorFields(error: unknown, max = 300): { code: string | null; message: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return { code: typeof code === "string" ? code : null, message: error instanceof Error ? error.message.slice(0, max) : String(error) };
}

export type Performed<T> = { ok: true; value: T } | { ok: false; completion: "fail" | "info"; error: unknown };

/**
 * Runs `call` as operation `f` (its invoke carries `fields`): `ok` with `answer(value)`, or the
 * error's completion (completionOfError) with its code and message. Never throws: the answer says.
 */
export async function perform<T>(
  history: History,
  f: string,
  fields: Record<string, unknown>,
  call: () => Promise<T>,
  opts: { answer?: (value: T) => Record<string, unknown>; refusal?: (code: string) => boolean } = {},
): Promise<Performed<T>> {
  const op = history.invoke(f, fields);
  let value: T;
  try {
    value = await call();
  } catch (error) {
    const completion = completionOfError(error, opts.refusal);
    op[completion](errorFields(error, 200));
    return { ok: false, completion, error };
  }
  op.ok(opts.answer ? opts.answer(value) : {});
  return { ok: true, value };
}

/**
 * Sends `signal` to `pid` as the completion of `op`: `ok` once the kernel took it (process.kill
 * returned), `fail` when it refused (ESRCH: the process is gone; EPERM): no signal was sent.
 */
export function signalAs(op: Operation, pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
  } catch (error) {
    op.fail(errorFields(error, 200));
    return false;
  }
  op.ok();
  return true;
}
