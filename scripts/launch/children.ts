// Child processes of the launcher (web server, worker): started with inherited output, stopped
// with SIGTERM and then SIGKILL after a grace period.
import { spawn, type ChildProcess } from "node:child_process";

export interface ManagedChild {
  name: string;
  process: ChildProcess;
  exited: Promise<number | null>;
}

export function startChild(name: string, command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): ManagedChild {
  // Own process group: a Ctrl-C in the terminal reaches only the launcher, which then stops the
  // children once, in order (a second signal would force-stop the worker mid-pass).
  const child = spawn(command, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "inherit", "inherit"], detached: true });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { name, process: child, exited };
}

export async function stopChild(child: ManagedChild, graceMs = 15_000): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill("SIGTERM");
  const timer = setTimeout(() => child.process.kill("SIGKILL"), graceMs);
  await child.exited;
  clearTimeout(timer);
}

export async function waitForHttp(url: string, opts: { timeoutMs: number; isAlive: () => boolean }): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError = "no answer yet";
  while (Date.now() < deadline) {
    if (!opts.isAlive()) throw new Error(`the process serving ${url} exited before it answered`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
      lastError = `HTTP ${response.status}`;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not become healthy within ${opts.timeoutMs / 1000} s (${lastError})`);
}
