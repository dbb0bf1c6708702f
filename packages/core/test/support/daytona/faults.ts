// Faults the test injects per call: the next matching call (by operation name, optionally
// by sandbox id) misbehaves once, then the emulator is honest again.
export type FaultKind =
  | { kind: "status"; status: number; message?: string }
  | { kind: "hang" }
  | { kind: "lost_reply" }
  | { kind: "truncate"; afterBytes: number }
  | { kind: "rate_limit"; retryAfterSeconds: number }
  | { kind: "never_confirms" }
  /** The call answers as if it worked, but changes nothing (a setting Daytona did not apply). */
  | { kind: "ignored" };

export type FaultSpec = FaultKind & { op: string; sandboxId?: string };

export interface FaultPlan {
  /** The next call of `op` misbehaves as described. */
  once(spec: FaultSpec): void;
  /** Answers every call held by a `hang` fault (with its real answer). */
  releaseHangs(): void;
  /** Faults not yet consumed. */
  pending(): FaultSpec[];
  clear(): void;
  take(op: string, sandboxId: string | undefined): FaultSpec | undefined;
  hold(): Promise<void>;
}

export function faultPlan(): FaultPlan {
  let queue: FaultSpec[] = [];
  let waiters: Array<() => void> = [];
  return {
    once(spec) {
      if (spec.kind === "truncate" && !(spec.afterBytes >= 0)) throw new Error("a truncate fault needs afterBytes >= 0");
      if (spec.kind === "status" && !(spec.status >= 400 && spec.status <= 599)) throw new Error("a status fault needs a 4xx/5xx status");
      queue.push(spec);
    },
    releaseHangs() {
      const released = waiters;
      waiters = [];
      for (const release of released) release();
    },
    pending: () => [...queue],
    clear() {
      queue = [];
    },
    take(op, sandboxId) {
      const index = queue.findIndex((f) => f.op === op && (f.sandboxId === undefined || f.sandboxId === sandboxId));
      if (index < 0) return undefined;
      const [fault] = queue.splice(index, 1);
      return fault;
    },
    hold() {
      return new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}
