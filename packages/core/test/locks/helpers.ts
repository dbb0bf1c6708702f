// Shared plumbing of the lock tests: temporary instance roots and forked lock-taking processes.
import { fork, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CORE_DIR = fileURLToPath(new URL("../..", import.meta.url));
const CHILD = fileURLToPath(new URL("./fixtures/lock-child.ts", import.meta.url));

export interface ChildMessage {
  type: string;
  [key: string]: unknown;
}

export interface LockChild {
  process: ChildProcess;
  messages: ChildMessage[];
  /** Resolves with the first message of `type` (already received or future). */
  waitFor(type: string, timeoutMs?: number): Promise<ChildMessage>;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
}

export function forkLockChild(args: Record<string, unknown>): LockChild {
  const child = fork(CHILD, [JSON.stringify(args)], { cwd: CORE_DIR, execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const messages: ChildMessage[] = [];
  const listeners = new Set<() => void>();
  child.on("message", (m) => {
    messages.push(m as ChildMessage);
    for (const l of listeners) l();
  });
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  const waitFor = (type: string, timeoutMs = 30_000) =>
    new Promise<ChildMessage>((resolve, reject) => {
      const check = () => {
        const found = messages.find((m) => m.type === type);
        if (found) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`child ${child.pid} sent no "${type}" within ${timeoutMs} ms; got ${JSON.stringify(messages)}`));
      }, timeoutMs);
      listeners.add(check);
      check();
    });
  return { process: child, messages, waitFor, exited };
}

export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `copyback-${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function waitUntil(predicate: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
