// Starts a Daytona emulator in a fresh temp root and a real SDK client pointed at it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { Daytona } from "@daytonaio/sdk";
import { afterEach, beforeEach } from "vitest";
import { startDaytonaEmulator, type DaytonaEmulator } from "../support/daytona/emulator";

export interface Harness {
  emulator: DaytonaEmulator;
  daytona: Daytona;
  root: string;
  client(apiKey: string, requestTimeoutMs?: number): Daytona;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const root = await mkdtemp(path.join(tmpdir(), "daytona-emulator-"));
  const emulator = await startDaytonaEmulator({ root });
  // Polling mode: the emulator serves no socket.io event stream, so the SDK waits by GET.
  const client = (apiKey: string, requestTimeoutMs?: number) =>
    new Daytona({ apiKey, apiUrl: emulator.apiUrl, target: "us", useDeprecatedPolling: true, requestTimeoutMs });
  return {
    emulator,
    daytona: client(emulator.apiKey),
    root,
    client,
    async close() {
      await emulator.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** A fresh emulator and client for each test of the calling file. */
export function useHarness(): () => Harness {
  let current: Harness | undefined;
  beforeEach(async () => {
    current = await startHarness();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => {
    if (!current) throw new Error("the Daytona harness runs only inside a test");
    return current;
  };
}
