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
import type { EnvironmentProvider, LeaseHandle, ProviderCapability } from "../../src/providers/types";

export interface DirProviderFaults {
  /** The next N exports fail with a provider error before any byte. */
  exportFailures?: number;
  /** The salvage export returns the unsafe primary archive again (still rejected). */
  unsafeSalvage?: boolean;
  /** Runs at the start of every export (observe the owner receipt, edit the host meanwhile). */
  onExport?: () => Promise<void>;
}

export class DirProvider implements EnvironmentProvider {
  readonly provider = "fake" as const;
  readonly capabilities: ReadonlySet<ProviderCapability>;
  readonly faults: DirProviderFaults = {};
  exports = 0;
  salvages = 0;
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

  async exportWorkspace(lease: LeaseHandle): Promise<Readable> {
    this.exports++;
    await this.faults.onExport?.();
    if ((this.faults.exportFailures ?? 0) > 0) {
      this.faults.exportFailures = (this.faults.exportFailures ?? 0) - 1;
      throw new DomainError("unavailable", "provider_export_failed", "The sandbox did not answer.");
    }
    return toReadable(exportWorkspaceArchive(this.sandbox(lease)));
  }

  async salvageExport(lease: LeaseHandle): Promise<{ archive: Readable; message: string }> {
    this.salvages++;
    const stream = this.faults.unsafeSalvage ? exportWorkspaceArchive(this.sandbox(lease)) : exportSalvageArchive(this.sandbox(lease));
    return { archive: toReadable(stream), message: SALVAGE_INFO_MESSAGE };
  }

  async inspect(lease: LeaseHandle) {
    return { state: "running" as const, identity: { providerLeaseId: lease.providerLeaseId, fingerprint: `fp-${lease.providerLeaseId}` }, processes: [] };
  }

  async dispose(): Promise<void> {
    await rm(this.#root, { recursive: true, force: true });
  }
}

function toReadable(stream: NodeJS.ReadableStream): Readable {
  return stream instanceof Readable ? stream : new Readable().wrap(stream);
}
