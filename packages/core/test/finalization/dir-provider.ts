// A small directory-backed EnvironmentProvider for finalization tests: each lease is a real
// directory, exports are real tar streams made by the copyback engine, and faults are injected
// on demand (export failures, a salvage that is still unsafe, a hook inside the export).
import { mkdtemp, mkdir, rm } from "node:fs/promises";
import { createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { exportWorkspaceArchive } from "../../src/copyback/archive/export";
import { extractValidatedArchive } from "../../src/copyback/archive/extract";
import { exportSalvageArchive, SALVAGE_INFO_MESSAGE } from "../../src/copyback/archive/salvage";
import { DomainError } from "../../src/errors";
import type { EnvironmentProvider, ExportOptions, LeaseHandle, ProviderCapability } from "../../src/providers/types";

export interface DirProviderFaults {
  /** The next N exports fail with a provider error before any byte. */
  exportFailures?: number;
  /** The salvage export returns the unsafe primary archive again (still rejected). */
  unsafeSalvage?: boolean;
  /** Runs at the start of every export (observe the owner receipt, edit the host meanwhile). */
  onExport?: () => Promise<void>;
  /** The next N export streams end cleanly after their first 1024 bytes (no end-of-archive marker). */
  truncatedExports?: number;
  /** The next N export streams fail after their first 1024 bytes (a socket reset without a code). */
  brokenExports?: number;
}

export class DirProvider implements EnvironmentProvider {
  readonly provider = "fake" as const;
  readonly capabilities: ReadonlySet<ProviderCapability>;
  readonly faults: DirProviderFaults = {};
  exports = 0;
  salvages = 0;
  /** The options of every export and salvage call, in order. */
  readonly exportOptions: { call: "export" | "salvage"; exclude: readonly string[] | undefined }[] = [];
  readonly #root: string;

  constructor(
    root: string,
    readonly pluginId = "test.dir",
    capabilities: ProviderCapability[] = ["exportWorkspace", "salvageExport", "seedWorkspace", "inspect"],
  ) {
    this.#root = root;
    this.capabilities = new Set(capabilities);
  }

  static async create(pluginId?: string, capabilities?: ProviderCapability[]): Promise<DirProvider> {
    return new DirProvider(await mkdtemp(join(tmpdir(), "copyback-dir-provider-")), pluginId, capabilities);
  }

  sandbox(lease: Pick<LeaseHandle, "providerLeaseId">): string {
    return join(this.#root, lease.providerLeaseId);
  }

  async seedWorkspace(lease: LeaseHandle, archive: Readable): Promise<void> {
    const dir = this.sandbox(lease);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const file = join(this.#root, `${lease.providerLeaseId}.seed.tar`);
    await pipeline(archive, createWriteStream(file));
    try {
      await extractValidatedArchive(file, dir);
    } finally {
      await rm(file, { force: true });
    }
  }

  async exportWorkspace(lease: LeaseHandle, opts: ExportOptions = {}): Promise<Readable> {
    this.exports++;
    this.exportOptions.push({ call: "export", exclude: opts.exclude });
    await this.faults.onExport?.();
    if ((this.faults.exportFailures ?? 0) > 0) {
      this.faults.exportFailures = (this.faults.exportFailures ?? 0) - 1;
      throw new DomainError("unavailable", "provider_export_failed", "The sandbox did not answer.");
    }
    const archive = toReadable(exportWorkspaceArchive(this.sandbox(lease), { exclude: opts.exclude ? [...opts.exclude] : undefined }));
    if ((this.faults.truncatedExports ?? 0) > 0) {
      this.faults.truncatedExports = (this.faults.truncatedExports ?? 0) - 1;
      return cutAfter(archive, 1024, "end");
    }
    if ((this.faults.brokenExports ?? 0) > 0) {
      this.faults.brokenExports = (this.faults.brokenExports ?? 0) - 1;
      return cutAfter(archive, 1024, "error");
    }
    return archive;
  }

  async salvageExport(lease: LeaseHandle, opts: ExportOptions = {}): Promise<{ archive: Readable; message: string }> {
    this.salvages++;
    this.exportOptions.push({ call: "salvage", exclude: opts.exclude });
    const exclude = opts.exclude ? [...opts.exclude] : undefined;
    const stream = this.faults.unsafeSalvage ? exportWorkspaceArchive(this.sandbox(lease), { exclude }) : exportSalvageArchive(this.sandbox(lease), { exclude });
    return { archive: toReadable(stream), message: SALVAGE_INFO_MESSAGE };
  }

  async inspect(lease: LeaseHandle) {
    return { state: "running" as const, identity: { providerLeaseId: lease.providerLeaseId, fingerprint: `fp-${lease.providerLeaseId}` }, processes: [] };
  }

  async dispose(): Promise<void> {
    await rm(this.#root, { recursive: true, force: true });
  }
}

/** The first `bytes` of an archive stream, then a clean end or an error (a transfer cut short). */
function cutAfter(source: Readable, bytes: number, how: "end" | "error"): Readable {
  async function* cut(): AsyncGenerator<Buffer> {
    let left = bytes;
    for await (const chunk of source as AsyncIterable<Buffer>) {
      yield chunk.subarray(0, left);
      left -= Math.min(left, chunk.length);
      if (left === 0) break;
    }
    source.destroy();
    if (how === "error") throw new Error("socket hang up");
  }
  return Readable.from(cut(), { objectMode: false });
}

function toReadable(stream: NodeJS.ReadableStream): Readable {
  return stream instanceof Readable ? stream : new Readable().wrap(stream);
}
