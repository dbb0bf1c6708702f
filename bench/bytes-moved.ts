// `pnpm bench:bytes-moved`: the bytes a remote provider moves per copyback case (issue 24, "bytes
// moved"), through the real Daytona provider and SDK against the Daytona emulator
// (packages/core/test/support/daytona, in this process on 127.0.0.1). Figures only; nothing asserted.
//
// Counted: every TCP byte both ways on this process's client sockets to the emulator's port
// (API and toolbox calls alike: HTTP headers, bodies, the manifest, the archives), read from
// each socket's bytesRead/bytesWritten (node's `net.client.socket` diagnostics channel hands
// over every client socket as it is made), so nothing the provider sends is missed.
//   seed        the generated tree seeded into a fresh sandbox (for scale)
//   full        exportWorkspace: the whole tree back
//   10 files    exportDelta after the agent appended to 10 files (an exec in the sandbox)
//   unchanged   exportDelta again against the manifest the 10-file export returned
// Targets: a 10-file change moves at most the changed files' bytes plus the manifest's (as JSON),
// the unchanged case at most the manifest's. The exec that makes the change is not counted.
// Options: --files=N (default 2,000), --mib=N (default 40).
import { channel } from "node:diagnostics_channel";
import { mkdtemp, rm, stat } from "node:fs/promises";
import type { Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { exportWorkspaceArchive, scanWorkspace } from "@copyback/core";
import { createDaytonaProvider, type LeaseHandle } from "@copyback/core/providers";
import { startDaytonaEmulator } from "@copyback/core/test-support/daytona/emulator";
import { forkGenerate } from "./lib/generate-child";
import { ms, renderTable, timed } from "./lib/stats";
import { loadAverage, printTarget } from "./lib/targets";
import { prng } from "./lib/workspace";

const option = (name: string, fallback: number) => {
  const raw = process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 1)
    throw new Error(`--${name} must be a positive number, got ${raw}`);
  return value;
};
const FILES = Math.round(option("files", 2_000));
const MIB = option("mib", 40);
const MiB = 2 ** 20;
const KEY = "DAYTONA_BENCH_KEY";

/** Bytes both ways on client sockets to one port, sockets closed or still open. */
class ByteCounter {
  private readonly open = new Set<Socket>();
  private closedUp = 0;
  private closedDown = 0;
  constructor(private readonly port: () => number) {
    channel("net.client.socket").subscribe((message) => {
      const socket = (message as { socket: Socket }).socket;
      const track = () => {
        if (socket.remotePort !== this.port()) return;
        this.open.add(socket);
        socket.once("close", () => {
          this.open.delete(socket);
          this.closedUp += socket.bytesWritten;
          this.closedDown += socket.bytesRead;
        });
      };
      if (socket.remotePort === undefined) socket.once("connect", track);
      else track();
    });
  }
  /** [to the emulator, from it] so far. */
  total(): [number, number] {
    let up = this.closedUp;
    let down = this.closedDown;
    for (const socket of this.open) {
      up += socket.bytesWritten;
      down += socket.bytesRead;
    }
    return [up, down];
  }
}

async function drain(stream: Readable | null): Promise<number> {
  let bytes = 0;
  if (stream) for await (const chunk of stream) bytes += (chunk as Buffer).length;
  return bytes;
}

async function main(): Promise<void> {
  const loadAtStart = loadAverage();
  const cpuAtStart = process.cpuUsage();
  const work = await mkdtemp(path.join(os.tmpdir(), "copyback-bytes-bench-"));
  const emulator = await startDaytonaEmulator({ root: path.join(work, "emulator") });
  const port = Number(new URL(emulator.url).port);
  const bytes = new ByteCounter(() => port);
  console.log(
    `bytes-moved benchmark in ${work}; Daytona emulator at ${emulator.url}; load ${loadAtStart}`,
  );
  try {
    const provider = createDaytonaProvider({
      instanceRoot: path.join(work, "instance"),
      variables: (name) => (name === KEY ? emulator.apiKey : undefined),
      lifecycleTimeoutSec: 30,
      transferTimeoutSec: 600,
    });
    const src = path.join(work, "src");
    const gen = await forkGenerate(
      src,
      { files: FILES, totalBytes: Math.round(MIB * MiB), seed: 42 },
      { listFiles: true },
    );
    const baseline = (await scanWorkspace(src)).manifest;
    const manifestBytes = Buffer.byteLength(JSON.stringify(baseline));
    console.log(
      `workspace: ${FILES} files, ${(gen.totalBytes / MiB).toFixed(0)} MiB; its manifest ${manifestBytes} bytes as JSON`,
    );

    const allocation = await provider.acquire!({
      companyId: "bench",
      environmentId: "bench",
      leaseId: "lease-bench",
      runId: "run-bench",
      config: { apiUrl: emulator.apiUrl, apiKeyEnv: KEY },
    });
    const handle: LeaseHandle = {
      leaseId: "lease-bench",
      pluginId: provider.pluginId,
      providerLeaseId: allocation.identity.providerLeaseId,
    };
    const measure = async (label: string, fn: () => Promise<string>) => {
      const [upBefore, downBefore] = bytes.total();
      const t = await timed(fn);
      const [up, down] = bytes.total();
      return {
        label,
        bytes: up - upBefore + down - downBefore,
        up: up - upBefore,
        down: down - downBefore,
        ms: t.ms,
        note: t.value,
      };
    };
    const rows = [];
    rows.push(
      await measure("seed", async () => {
        await provider.seedWorkspace!(handle, exportWorkspaceArchive(src) as Readable);
        return `${gen.totalBytes} content bytes`;
      }),
    );
    rows.push(
      await measure(
        "full export",
        async () => `${await drain(await provider.exportWorkspace!(handle, {}))} archive bytes`,
      ),
    );
    // Past the stat cache's racy window (a file changed within 2 s of the seed's scan is hashed).
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const rand = prng(7);
    const picks = [
      ...new Set(
        Array.from(
          { length: 10 },
          () => (gen.files[Math.floor(rand() * gen.files.length)] as { path: string }).path,
        ),
      ),
    ];
    const done = await provider.exec!(handle, {
      argv: [
        "sh",
        "-c",
        'for f in "$@"; do printf "edited by the benchmark\\n" >> "$f" || exit 1; done',
        "bench",
        ...picks,
      ],
      env: {},
      timeoutMs: 60_000,
      onOutput: () => {},
    });
    if ((done as { exitCode?: number }).exitCode !== 0)
      throw new Error(`the edit failed: ${JSON.stringify(done)}`);
    let changedBytes = 0;
    for (const pick of picks)
      changedBytes += (await stat(path.join(src, pick))).size + "edited by the benchmark\n".length;
    let snapshot: unknown = baseline;
    const changed = await measure("10-file change (delta)", async () => {
      const delta = await provider.exportDelta!(handle, { baseline, exclude: [] });
      const archive = await drain(delta.archive);
      snapshot = delta.manifest;
      return `${delta.report.changed} changed, archive ${archive} bytes, ${picks.length} files of ${changedBytes} bytes`;
    });
    rows.push(changed);
    const unchanged = await measure("unchanged (delta)", async () => {
      const delta = await provider.exportDelta!(handle, {
        baseline: snapshot as typeof baseline,
        exclude: [],
      });
      return `${delta.report.changed} changed, archive ${await drain(delta.archive)} bytes`;
    });
    rows.push(unchanged);
    await provider.destroy?.(handle).catch(() => undefined);

    console.log(
      renderTable(
        ["case", "bytes moved", "sent / received", "wall", "what"],
        rows.map((r) => [r.label, String(r.bytes), `${r.up} / ${r.down}`, ms(r.ms), r.note]),
      ),
    );
    const changedLimit = changedBytes + manifestBytes;
    console.log(
      `10-file change: ${changed.bytes} bytes against ${changedLimit} (${changedBytes} changed + ${manifestBytes} manifest); unchanged: ${unchanged.bytes} against ${manifestBytes}`,
    );
    const used = process.cpuUsage(cpuAtStart);
    console.log(
      `load average (1, 5, 15 min) at the start ${loadAtStart}, at the end ${loadAverage()}; CPU time of this process ${ms((used.user + used.system) / 1000)} (the emulator runs in it)`,
    );
    const sized = FILES === 2_000 && MIB === 40 ? "" : ` (${FILES} files / ${MIB} MiB)`;
    printTarget(
      "bytes-moved",
      `10-file change <= changed bytes + manifest${sized}`,
      `${changed.bytes} B of ${changedLimit} B`,
      changed.bytes <= changedLimit,
    );
    printTarget(
      "bytes-moved",
      `unchanged <= manifest${sized}`,
      `${unchanged.bytes} B of ${manifestBytes} B`,
      unchanged.bytes <= manifestBytes,
    );
  } finally {
    await emulator.close();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
