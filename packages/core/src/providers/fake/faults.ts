// Fault injection for the fake provider: the provider faults that finalization, lease cleanup
// and recovery must survive, on demand. Each fault applies to the next calls of one operation:
//   failTimes(op, n, error)  the next n calls throw `error` before doing anything;
//   hang(op, n = forever)    calls never settle until their AbortSignal (if any) aborts;
//   loseReply(op, n = 1)     the next n calls perform their effect, then throw a transport error
//                            (the caller cannot tell whether the effect happened);
//   unconfirmedStop(n = forever)  stopLease answers with a receipt that is not confirmed;
//   corruptDelta(n = 1)      the next n delta exports disagree with their own archive (a wrong
//                            hash in the manifest): the host's verification refuses them;
//   ignoredAutoDelete(n = forever)  disableAutoDelete answers but the provider's record keeps
//                            auto-delete enabled (R-DT-1: the read-back does not confirm it).
import { DomainError } from "../../errors";

export const FAKE_OPERATIONS = [
  "acquire",
  "exec",
  "exportWorkspace",
  "exportDelta",
  "salvageExport",
  "seedWorkspace",
  "stopLease",
  "resume",
  "destroy",
  "inspect",
  "writeWorkspaceSentinel",
  "readWorkspaceSentinel",
  "disableAutoDelete",
  "readAutoDeletePolicy",
  "placeInputs",
  "measureSandbox",
] as const;
export type FakeOperation = (typeof FAKE_OPERATIONS)[number];

type Fault = { kind: "fail"; remaining: number; error: Error } | { kind: "hang"; remaining: number } | { kind: "loseReply"; remaining: number };

export const injectedFailure = (op: FakeOperation) =>
  new DomainError("unavailable", "provider_fault_injected", `Injected failure of the fake provider's ${op}.`, { op });

export const lostReply = (op: FakeOperation) =>
  new DomainError("unavailable", "provider_reply_lost", `The fake provider's reply to ${op} was lost.`, { op });

function checkCount(n: number): number {
  if (!(n === Infinity || (Number.isSafeInteger(n) && n > 0))) {
    throw new DomainError("invalid", "fake_fault_invalid", `A fault count must be a positive integer, not ${n}.`);
  }
  return n;
}

function checkOperation(op: string): FakeOperation {
  if (!(FAKE_OPERATIONS as readonly string[]).includes(op)) {
    throw new DomainError("invalid", "fake_fault_invalid", `The fake provider has no operation ${op}.`);
  }
  return op as FakeOperation;
}

function aborted(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DomainError("unavailable", "provider_call_aborted", "The provider call was aborted.");
}

export class FakeFaults {
  private readonly queue = new Map<FakeOperation, Fault[]>();
  private unconfirmedStops = 0;
  private probeFailuresOnStop = 0;
  private ignoredAutoDeletes = 0;
  private corruptDeltas = 0;

  failTimes(op: FakeOperation, n: number, error?: Error): this {
    this.push(checkOperation(op), { kind: "fail", remaining: checkCount(n), error: error ?? injectedFailure(op) });
    return this;
  }

  hang(op: FakeOperation, n = Infinity): this {
    this.push(checkOperation(op), { kind: "hang", remaining: checkCount(n) });
    return this;
  }

  loseReply(op: FakeOperation, n = 1): this {
    this.push(checkOperation(op), { kind: "loseReply", remaining: checkCount(n) });
    return this;
  }

  unconfirmedStop(n = Infinity): this {
    this.unconfirmedStops = checkCount(n);
    return this;
  }

  corruptDelta(n = 1): this {
    this.corruptDeltas = checkCount(n);
    return this;
  }

  /** Consumes one corrupt-delta fault; true when this delta export must disagree with its archive. */
  takeCorruptDelta(): boolean {
    if (this.corruptDeltas <= 0) return false;
    this.corruptDeltas -= 1;
    return true;
  }

  ignoredAutoDelete(n = Infinity): this {
    this.ignoredAutoDeletes = checkCount(n);
    return this;
  }

  /** Consumes one ignored-auto-delete fault; true when this disable must not take effect. */
  takeIgnoredAutoDelete(): boolean {
    if (this.ignoredAutoDeletes <= 0) return false;
    this.ignoredAutoDeletes -= 1;
    return true;
  }

  /**
   * R-EX-5 rehearsal: once the sandbox is first stopped (the retained state recovery starts
   * from), its next n probes fail: n inspect calls and n sentinel reads. Armed at the stop, so
   * the preparation's own inspect at the start of a run is not what fails.
   */
  failProbesAfterStop(n: number): this {
    this.probeFailuresOnStop = checkCount(n);
    return this;
  }

  /** Called by a confirmed stop: arms the probe failures that wait for it (once). */
  armProbeFailuresOnStop(): void {
    if (this.probeFailuresOnStop <= 0) return;
    this.failTimes("inspect", this.probeFailuresOnStop);
    this.failTimes("readWorkspaceSentinel", this.probeFailuresOnStop);
    this.probeFailuresOnStop = 0;
  }

  /** Removes every pending fault (of one operation, or all). */
  clear(op?: FakeOperation): this {
    if (op) this.queue.delete(op);
    else {
      this.queue.clear();
      this.unconfirmedStops = 0;
      this.probeFailuresOnStop = 0;
      this.ignoredAutoDeletes = 0;
      this.corruptDeltas = 0;
    }
    return this;
  }

  /** Consumes one unconfirmed-stop fault; true when this stop must not be confirmed. */
  takeUnconfirmedStop(): boolean {
    if (this.unconfirmedStops <= 0) return false;
    this.unconfirmedStops -= 1;
    return true;
  }

  /** Runs one call of `op` through the pending faults. */
  async run<T>(op: FakeOperation, effect: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const fault = this.take(op);
    if (fault?.kind === "fail") throw fault.error;
    if (fault?.kind === "hang") return this.hangUntilAborted(signal);
    const result = await effect();
    if (fault?.kind === "loseReply") throw lostReply(op);
    return result;
  }

  private push(op: FakeOperation, fault: Fault): void {
    const list = this.queue.get(op) ?? [];
    list.push(fault);
    this.queue.set(op, list);
  }

  private take(op: FakeOperation): Fault | undefined {
    const list = this.queue.get(op);
    const fault = list?.[0];
    if (!list || !fault) return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) list.shift();
    return fault;
  }

  private hangUntilAborted<T>(signal?: AbortSignal): Promise<T> {
    return new Promise<T>((_resolve, reject) => {
      if (!signal) return;
      if (signal.aborted) reject(aborted(signal));
      else signal.addEventListener("abort", () => reject(aborted(signal)), { once: true });
    });
  }
}
