// Shared helpers of the embedded-server integration tests.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

export function tempInstanceRoot(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "copyback-embedded-test-"));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo;
      server.close(() => resolve(address.port));
    });
  });
}

export async function query<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitUntil(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface HeldServer {
  url: string;
  pid: number;
  ownerPid: number;
  child: ChildProcess;
  /** Close stdin: the owner stops its server and exits. */
  release(): Promise<void>;
  /** The owner blocks its event loop for `ms` (reads nothing meanwhile); resolves once it has begun. */
  block(ms: number): Promise<void>;
}

/** Starts an embedded server owned by another Node process (a second "application"). */
export async function holdServerInChild(instanceRoot: string, port: number): Promise<HeldServer> {
  const script = fileURLToPath(new URL("./hold-server.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, instanceRoot, String(port)], {
    cwd: path.dirname(script),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // Every line the owner prints, kept (the pipe is drained for its whole life).
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
      lines.push(out.slice(0, nl));
      out = out.slice(nl + 1);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  child.once("exit", () => {
    for (const wake of waiters.splice(0)) wake();
  });
  const nextLine = (index: number) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (lines.length > index) resolve(lines[index]!);
        else if (child.exitCode !== null || child.signalCode !== null)
          reject(new Error(`hold-server exited (${child.exitCode}): ${stderr}`));
        else waiters.push(check);
      };
      check();
    });
  const line = await nextLine(0);
  const info = JSON.parse(line) as { url: string; pid: number; ownerPid: number };
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  return {
    ...info,
    child,
    release: async () => {
      child.stdin?.end();
      await exited;
    },
    block: async (ms: number) => {
      const index = lines.length;
      child.stdin?.write(`block ${ms}\n`);
      const answer = await nextLine(index);
      if (answer !== "blocking") throw new Error(`hold-server answered ${answer}`);
    },
  };
}
