// An empty host workspace round-trips through every built-in provider the way a run uses it:
// prepareRunWorkspace seeds the sandbox with exportWorkspaceArchive(host) and finalization
// exports it back, validates and extracts. The archive of an empty directory is only the
// end-of-archive blocks; a provider must seed an empty workspace from it (a sandbox that held
// files before, a reused one, is emptied) and export an empty workspace back.
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterAll, describe, expect, it } from "vitest";
import { exportWorkspaceArchive } from "../../src/copyback/archive/export";
import { extractValidatedArchive } from "../../src/copyback/archive/extract";
import { createFakeProvider } from "../../src/providers/fake/index";
import { createLocalProvider } from "../../src/providers/local/index";
import type { EnvironmentProvider, LeaseHandle } from "../../src/providers/types";

const scratch = await mkdtemp(join(tmpdir(), "copyback-empty-ws-"));
afterAll(async () => rm(scratch, { recursive: true, force: true }));

interface Case {
  name: string;
  provider: EnvironmentProvider;
  /** Puts one file in the sandbox's workspace (what an earlier run left in a reused sandbox). */
  leaveFile(handle: LeaseHandle): Promise<void>;
}

const fake = createFakeProvider();
const local = createLocalProvider({ instanceRoot: join(scratch, "instance"), isolation: "none", killGraceMs: 500 });
const cases: Case[] = [
  {
    name: "fake",
    provider: fake,
    leaveFile: async (handle) => {
      fake.store.get(handle.providerLeaseId)!.workspace.set("leftover.txt", { kind: "file", content: Buffer.from("old"), mode: 0o644 });
    },
  },
  {
    name: "local",
    provider: local,
    leaveFile: (handle) => writeFile(join(scratch, "instance", "sandboxes", handle.providerLeaseId, "workspace", "leftover.txt"), "old"),
  },
];

let counter = 0;

describe.each(cases)("an empty workspace through the $name provider", ({ name, provider, leaveFile }) => {
  it("seeds from the empty host's archive (emptying what was there) and exports an empty workspace back", async () => {
    counter += 1;
    const leaseId = `empty-${name}-${counter}`;
    const allocation = await provider.acquire!({ companyId: "c", environmentId: "e", leaseId, runId: `run-${leaseId}`, config: {} });
    const handle: LeaseHandle = { leaseId, pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
    await leaveFile(handle);

    const host = join(scratch, `host-${name}`);
    await mkdir(host);
    await provider.seedWorkspace!(handle, Readable.from(exportWorkspaceArchive(host)));

    const archive = join(scratch, `export-${name}.tar`);
    await pipeline(await provider.exportWorkspace!(handle), createWriteStream(archive));
    const back = join(scratch, `back-${name}`);
    await mkdir(back);
    expect(await extractValidatedArchive(archive, back)).toMatchObject({ kind: "safe", entries: 0 });
    expect(await readdir(back)).toEqual([]);
    await provider.destroy!(handle);
  });
});
