// The logger the dispatcher and executor write to: the pino shape (object first, then message),
// so the worker passes its pino logger as is and tests pass a silent or recording one.
export interface DispatchLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export const silentDispatchLog: DispatchLog = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
