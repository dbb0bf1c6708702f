// The CLI the torture suite and E2E start: prints its URL, serves, refuses bad arguments.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Daytona } from "@daytonaio/sdk";
import { describe, expect, it } from "vitest";

const cli = fileURLToPath(new URL("../support/daytona/start-daytona-emulator.ts", import.meta.url));
const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));

function start(args: string[]) {
  const child = spawn(tsx, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const firstLine = async () => {
    for (let i = 0; i < 200 && !stdout.includes("\n"); i++) await new Promise((r) => setTimeout(r, 50));
    return stdout.split("\n")[0] ?? "";
  };
  return { child, exited, firstLine, stderr: () => stderr };
}

describe("start-daytona-emulator", () => {
  it("prints its API URL and key, serves the SDK, stops on SIGTERM", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "daytona-cli-"));
    const run = start(["--root", root, "--api-key", "cli-key"]);
    try {
      const info = JSON.parse(await run.firstLine()) as { apiUrl: string; apiKey: string };
      expect(info.apiKey).toBe("cli-key");
      const daytona = new Daytona({ apiKey: info.apiKey, apiUrl: info.apiUrl, target: "us", useDeprecatedPolling: true });
      const sandbox = await daytona.create({ labels: { via: "cli" } });
      expect(sandbox.state).toBe("started");
    } finally {
      run.child.kill("SIGTERM");
      expect(await run.exited).toBe(0);
      await rm(root, { recursive: true, force: true });
    }
  });

  it("refuses a missing root and a bad port", async () => {
    const noRoot = start([]);
    expect(await noRoot.exited).toBe(2);
    expect(noRoot.stderr()).toMatch(/usage/);
    const badPort = start(["--root", tmpdir(), "--port", "99999"]);
    expect(await badPort.exited).toBe(2);
    expect(badPort.stderr()).toMatch(/--port/);
  });
});
