// The Daytona provider's tests: each test gets a fresh emulator (test/support/daytona) in its own
// temp root, and the real plugin pointed at it through the real SDK, with its API key in a
// variable the plugin reads by name. Helpers seed a workspace from a host tree and export one
// into a fresh directory, so trees can be compared entry for entry (manifests with sha256).
import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterEach, beforeEach } from "vitest";
import { extractValidatedArchive } from "../../../src/copyback/archive/extract";
import { exportWorkspaceArchive } from "../../../src/copyback/archive/export";
import { validateArchive } from "../../../src/copyback/archive/validate";
import { takeManifest } from "../../../src/copyback/manifest/take-manifest";
import type { Manifest } from "../../../src/copyback/manifest/types";
import { createDaytonaProvider } from "../../../src/providers/daytona/daytona-provider";
import type { EnvironmentProvider, ExecRequest, LeaseHandle, OutputStream } from "../../../src/providers/types";
import { startDaytonaEmulator, type DaytonaEmulator } from "../../support/daytona/emulator";

export const KEY_VARIABLE = "DAYTONA_TEST_KEY";

export interface DaytonaWorld {
  root: string;
  emulator: DaytonaEmulator;
  /** The variables the plugin reads (tests change them to model a missing or rotated key). */
  variables: Map<string, string>;
  provider: EnvironmentProvider;
  config(extra?: Record<string, unknown>): Record<string, unknown>;
  acquire(extra?: Record<string, unknown>): Promise<Acquired>;
  /** A host directory with these files ("path/": a directory; { link }: a symlink). */
  tree(files: Record<string, string | Buffer | { link: string }>): Promise<string>;
  seed(handle: LeaseHandle, dir: string): Promise<void>;
  /** Exports into a fresh directory (validated first) and returns its manifest and path. */
  exportTree(handle: LeaseHandle, exclude?: string[]): Promise<{ dir: string; manifest: Manifest }>;
  exec(handle: LeaseHandle, argv: string[], more?: Partial<ExecRequest>): Promise<{ result: Awaited<ReturnType<NonNullable<EnvironmentProvider["exec"]>>>; output: Array<[OutputStream, string]> }>;
  scratch(): Promise<string>;
}

export interface Acquired {
  handle: LeaseHandle;
  fingerprint: string;
  sandboxId: string;
  /** The sandbox's files as the emulator keeps them on disk. */
  sandboxDir: string;
  workspaceDir: string;
  runId: string;
}

export const manifestOf = (dir: string) => takeManifest(dir);

export async function drain(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function useDaytona(): () => DaytonaWorld {
  let world: DaytonaWorld | undefined;
  beforeEach(async () => {
    const root = await mkdtemp(join(tmpdir(), "copyback-daytona-"));
    const emulator = await startDaytonaEmulator({ root: join(root, "emulator") });
    const variables = new Map([[KEY_VARIABLE, emulator.apiKey]]);
    const provider = createDaytonaProvider({
      instanceRoot: join(root, "instance"),
      variables: (name) => variables.get(name),
      backoff: { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 100, maxRetryAfterMs: 5_000 },
      lifecycleTimeoutSec: 3,
      transferTimeoutSec: 60,
    });
    let n = 0;
    const scratch = () => mkdtemp(join(root, "scratch-"));
    const config = (extra: Record<string, unknown> = {}) => ({ apiUrl: emulator.apiUrl, apiKeyEnv: KEY_VARIABLE, ...extra });
    world = {
      root,
      emulator,
      variables,
      provider,
      config,
      scratch,
      async acquire(extra = {}) {
        const leaseId = `lease-${randomUUID()}`;
        const runId = `run-${++n}`;
        const allocation = await provider.acquire!({ companyId: "company-1", environmentId: "env-1", leaseId, runId, config: config(extra) });
        const handle = { leaseId, pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
        const sandboxId = /^daytona:([^?]+)/.exec(handle.providerLeaseId)?.[1] ?? "";
        const sandboxDir = join(root, "emulator", sandboxId);
        return { handle, fingerprint: allocation.identity.fingerprint, sandboxId, sandboxDir, workspaceDir: join(sandboxDir, "copyback", "workspace"), runId };
      },
      async tree(files) {
        const dir = await scratch();
        for (const [path, content] of Object.entries(files)) {
          const target = join(dir, path);
          if (path.endsWith("/")) await mkdir(target, { recursive: true });
          else {
            await mkdir(dirname(target), { recursive: true });
            if (typeof content === "object" && !Buffer.isBuffer(content)) await symlink(content.link, target);
            else await writeFile(target, content);
          }
        }
        return dir;
      },
      async seed(handle, dir) {
        await provider.seedWorkspace!(handle, exportWorkspaceArchive(dir) as Readable);
      },
      async exportTree(handle, exclude) {
        const dir = await scratch();
        const file = join(dir, "export.tar");
        await pipeline(await provider.exportWorkspace!(handle, exclude ? { exclude } : {}), createWriteStream(file));
        const verdict = await validateArchive(file);
        if (verdict.kind !== "safe") throw new Error(`the export was refused: ${JSON.stringify(verdict)}`);
        const out = join(dir, "tree");
        await mkdir(out);
        await extractValidatedArchive(file, out);
        return { dir: out, manifest: await takeManifest(out) };
      },
      async exec(handle, argv, more = {}) {
        const output: Array<[OutputStream, string]> = [];
        const result = await provider.exec!(handle, { argv, env: {}, timeoutMs: 20_000, onOutput: (stream, chunk) => output.push([stream, chunk]), ...more });
        return { result, output };
      },
    };
  });
  afterEach(async () => {
    if (!world) return;
    await world.emulator.close();
    await rm(world.root, { recursive: true, force: true });
    world = undefined;
  });
  return () => {
    if (!world) throw new Error("the Daytona world exists only inside a test");
    return world;
  };
}
