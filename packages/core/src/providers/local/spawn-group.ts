// Starts one command as a new process group (detached: true makes it a group leader; no shell)
// and streams its output as text, decoding UTF-8 across chunk boundaries.
import { spawn, type ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import type { Readable } from "node:stream";
import { DomainError } from "../../errors";
import type { OutputStream } from "../types";

export interface SpawnedGroup {
  child: ChildProcess;
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** All output delivered (stdout and stderr ended). */
  drained: Promise<void>;
  /** bubblewrap's --info-fd answer: the host PID of the sandbox's init (null without it). */
  namespaceInitPid: Promise<number | null>;
}

export interface SpawnOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Open fd 3 for bubblewrap's --info-fd. */
  infoFd: boolean;
  onOutput?: (stream: OutputStream, chunk: string) => void;
}

function stream(readable: Readable | null, name: OutputStream, onOutput: SpawnOptions["onOutput"]): Promise<void> {
  if (!readable) return Promise.resolve();
  const decoder = new StringDecoder("utf8");
  readable.on("data", (chunk: Buffer) => {
    const text = decoder.write(chunk);
    if (text) onOutput?.(name, text);
  });
  return new Promise((resolve) => {
    const finish = () => {
      const rest = decoder.end();
      if (rest) onOutput?.(name, rest);
      resolve();
    };
    readable.once("end", finish);
    readable.once("error", () => resolve());
  });
}

function readInfo(readable: Readable | null | undefined): Promise<number | null> {
  if (!readable) return Promise.resolve(null);
  return new Promise((resolve) => {
    let text = "";
    readable.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      try {
        const pid = (JSON.parse(text) as { "child-pid"?: unknown })["child-pid"];
        resolve(typeof pid === "number" && Number.isSafeInteger(pid) && pid > 0 ? pid : null);
      } catch {
        // incomplete JSON: wait for more
      }
    });
    readable.once("close", () => resolve(null));
    readable.once("error", () => resolve(null));
  });
}

export async function spawnGroup(opts: SpawnOptions): Promise<SpawnedGroup> {
  const child = spawn(opts.command, [...opts.args], {
    cwd: opts.cwd,
    // The agent's whole environment (exec-environment.ts); the cast keeps this file type-correct
    // where a framework augments ProcessEnv with required names (Next.js's NODE_ENV).
    env: opts.env as NodeJS.ProcessEnv,
    detached: true,
    shell: false,
    stdio: opts.infoFd ? ["ignore", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const drained = Promise.all([stream(child.stdout, "stdout", opts.onOutput), stream(child.stderr, "stderr", opts.onOutput)]).then(() => undefined);
  const namespaceInitPid = opts.infoFd ? readInfo(child.stdio[3] as Readable | null) : Promise.resolve(null);
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", () => resolve());
    child.once("error", (error: NodeJS.ErrnoException) =>
      reject(new DomainError("invalid", "exec_spawn_failed", `The command could not be started (${error.code ?? error.message}).`, { errno: error.code })),
    );
  });
  // Later errors (a failed kill) are not fatal: liveness is judged by probes.
  child.on("error", () => undefined);
  return { child, pid: child.pid as number, exited, drained, namespaceInitPid };
}
