// R-EX-8: one copyback "runtime" of the live Daytona test, run as its own child process with its
// own provider instance (nothing carried over from the process that created the sandbox but the
// lease handle, as after a controller restart). It runs the steps it is given against the
// sandbox and prints one JSON line per step. Transport faults are injected by a wrapper around
// the provider: the first call of a faulted operation is dropped (it never reaches Daytona) or
// its reply is lost (Daytona did the work, this runtime never hears of it).
//   tsx daytona-live-runtime.ts '<json {handle, identity, instanceRoot, steps, exportFile?}>'
import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { createDaytonaProvider, type EnvironmentProvider, type LeaseHandle } from "../../src/entries/providers";

export type LiveStep =
  /** inspect, its first call dropped: the error is seen, the probe is asked again. */
  | "probe"
  /** stopLease whose reply is lost: Daytona stops the sandbox, this runtime only sees an error. */
  | "stop-reply-lost"
  /** stopLease, its first call dropped, then asked again: the receipt. */
  | "stop"
  | "inspect"
  /** resume with the acquisition's identity, then the whole workspace exported to exportFile. */
  | "resume-export";

export interface RuntimeInput {
  handle: LeaseHandle;
  identity: { providerLeaseId: string; fingerprint: string };
  instanceRoot: string;
  steps: LiveStep[];
  exportFile?: string;
}

const transportError = (op: string, how: string) => Object.assign(new Error(`${op}: ${how} (injected transport fault)`), { code: "ECONNRESET" });

/** The provider with each operation's first call faulted as `faults` says. */
function withTransportFaults(provider: EnvironmentProvider, faults: Record<string, "drop" | "lose_reply">): EnvironmentProvider {
  const used = new Set<string>();
  const wrap = <A extends unknown[], R>(op: string, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const fault = used.has(op) ? undefined : faults[op];
      used.add(op);
      if (fault === "drop") throw transportError(op, "the connection dropped before the call arrived");
      const answer = await call(...args);
      if (fault === "lose_reply") throw transportError(op, "the reply was lost after the call was done");
      return answer;
    };
  return {
    ...provider,
    inspect: wrap("inspect", provider.inspect!.bind(provider)),
    stopLease: wrap("stopLease", provider.stopLease!.bind(provider)),
  };
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? "{}") as RuntimeInput;
  const base = createDaytonaProvider({ instanceRoot: input.instanceRoot, pluginId: input.handle.pluginId });
  const stopFault = input.steps.includes("stop-reply-lost") ? "lose_reply" : "drop";
  const provider = withTransportFaults(base, { inspect: "drop", stopLease: stopFault });
  const say = (step: string, body: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ step, ...body })}\n`);
  for (const step of input.steps) {
    if (step === "probe") {
      const first = await provider.inspect!(input.handle).then(() => "answered", (error: Error) => error.message);
      const inspection = await provider.inspect!(input.handle);
      say(step, { first, state: inspection.state, remote: inspection.remote ?? null });
    } else if (step === "stop-reply-lost") {
      const seen = await provider.stopLease!(input.handle, { requestId: randomUUID() }).then(() => "answered", (error: Error) => error.message);
      say(step, { seen });
    } else if (step === "stop") {
      const first = await provider.stopLease!(input.handle, { requestId: randomUUID() }).then(() => "answered", (error: Error) => error.message);
      const receipt = await provider.stopLease!(input.handle, { requestId: randomUUID() });
      say(step, { first, receipt });
    } else if (step === "inspect") {
      const inspection = await base.inspect!(input.handle);
      say(step, { state: inspection.state, identity: inspection.identity, remote: inspection.remote ?? null });
    } else if (step === "resume-export") {
      if (!input.exportFile) throw new Error("resume-export needs exportFile");
      const identity = await base.resume!(input.handle, input.identity);
      await pipeline(await base.exportWorkspace!(input.handle, {}), createWriteStream(input.exportFile));
      say(step, { identity });
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
