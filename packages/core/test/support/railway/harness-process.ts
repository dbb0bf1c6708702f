// The harness (apps/harness) as a real child process for integration tests (its own, and the
// tenant takeover tests of core): started with its own
// environment, its output drained into memory (read for the "listening" line and the logs),
// stopped with SIGTERM and awaited.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import path from "node:path";

// This file is packages/core/test/support/railway/; the harness app is apps/harness of the same checkout.
const appRoot = path.resolve(import.meta.dirname, "../../../../../apps/harness");

export interface HarnessChild {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<number | null>;
}

export async function startHarness(env: Record<string, string>): Promise<HarnessChild> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: appRoot,
    env: { PATH: process.env.PATH ?? "", HARNESS_HOST: "127.0.0.1", HARNESS_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = once(child, "exit");
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the harness did not listen within 20 s:\n${out}`)), 20_000);
    const look = () => {
      for (const line of out.split("\n")) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        return resolve((JSON.parse(line) as { port: number }).port);
      }
    };
    child.stdout!.on("data", look);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the harness exited before listening:\n${out}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

/** Runs the harness with a configuration it must refuse; resolves with its exit code and output. */
export async function runHarnessExpectingExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: appRoot, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, output: out };
}
