// Real processes for the toolbox: `sh -c` in the sandbox directory, output collected as it
// arrives (never a blocked pipe), a timeout that kills the whole process group.
import { spawn } from "node:child_process";

export interface RunningCommand {
  stdout: Buffer[];
  stderr: Buffer[];
  exitCode: number | undefined;
  timedOut: boolean;
  done: Promise<void>;
  onChunk(listener: (stream: "stdout" | "stderr", chunk: Buffer) => void): void;
  kill(): void;
}

export function runCommand(command: string, cwd: string, env: Record<string, string> | undefined, timeoutSec: number | undefined): RunningCommand {
  const child = spawn("sh", ["-c", command], {
    cwd,
    env: { ...process.env, HOME: cwd, ...(env ?? {}) },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const listeners: Array<(stream: "stdout" | "stderr", chunk: Buffer) => void> = [];
  const killGroup = () => {
    if (child.pid === undefined || run.exitCode !== undefined) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
  };
  const run: RunningCommand = {
    stdout: [],
    stderr: [],
    exitCode: undefined,
    timedOut: false,
    done: new Promise<void>((resolve) => {
      child.on("error", (error) => {
        run.stderr.push(Buffer.from(String(error)));
        run.exitCode = 127;
        resolve();
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        run.exitCode = code ?? (signal ? 128 + signalNumber(signal) : 1);
        resolve();
      });
    }),
    onChunk(listener) {
      listeners.push(listener);
    },
    kill: killGroup,
  };
  const timer = timeoutSec && timeoutSec > 0
    ? setTimeout(() => {
        run.timedOut = true;
        killGroup();
      }, timeoutSec * 1000)
    : undefined;
  for (const stream of ["stdout", "stderr"] as const) {
    child[stream].on("data", (chunk: Buffer) => {
      run[stream].push(chunk);
      for (const listener of listeners) listener(stream, chunk);
    });
  }
  return run;
}

function signalNumber(signal: NodeJS.Signals): number {
  return signal === "SIGKILL" ? 9 : signal === "SIGTERM" ? 15 : signal === "SIGINT" ? 2 : 1;
}
