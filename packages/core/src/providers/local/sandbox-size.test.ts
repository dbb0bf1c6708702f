// The local provider's measureSandbox (sandbox-size.ts) on real directories: exact bytes and
// entries of known contents, links never followed (a link to a large file outside counts as one
// entry of no bytes), a file with two hard links counted once, a name that is not UTF-8 counted,
// and the entry and time budgets stopping the walk with a lower bound that says which.
import { link, mkdir, mkdtemp, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLocalProvider } from "./local-provider";
import { measureTree } from "./sandbox-size";

const scratch = await mkdtemp(join(tmpdir(), "copyback-size-"));
afterAll(async () => rm(scratch, { recursive: true, force: true }));
const budget = { timeMs: 10_000, entries: 1_000_000 };
let counter = 0;

/** A tree of known contents: 3 files (1,000 + 20 + 0 bytes), 2 directories, links to the outside. */
async function knownTree(): Promise<{ root: string; workspace: string; outside: string }> {
  const root = join(scratch, `tree-${++counter}`);
  const workspace = join(root, "workspace");
  await mkdir(join(workspace, "src", "deep"), { recursive: true });
  await writeFile(join(workspace, "src", "a.bin"), Buffer.alloc(1_000, 7));
  await writeFile(join(workspace, "src", "deep", "b.txt"), "twenty bytes of text");
  await writeFile(join(workspace, "empty"), "");
  // A large file outside the tree, reached only through links: never counted.
  const outside = join(scratch, `outside-${counter}.bin`);
  await writeFile(outside, "");
  await truncate(outside, 64 * 1024 * 1024);
  await symlink(outside, join(workspace, "big-link"));
  await symlink(scratch, join(workspace, "dir-link"));
  // Beside the workspace: the provider's records.
  await mkdir(join(root, "control"));
  await writeFile(join(root, "control", "identity.json"), "{}\n");
  return { root, workspace, outside };
}

describe("measureTree", () => {
  it("counts known contents exactly, never following a link", async () => {
    const { root, workspace } = await knownTree();
    const measured = await measureTree(root, { budget, part: workspace });
    // workspace: src, src/a.bin, src/deep, src/deep/b.txt, empty, big-link, dir-link
    expect(measured.part).toEqual({ bytes: 1_020, entries: 7 });
    // plus the workspace directory itself, control, control/identity.json (3 bytes)
    expect(measured.total).toEqual({ bytes: 1_023, entries: 10 });
    expect(measured.lowerBound).toBeNull();
  });

  it("counts a hard-linked file once and a name that is not UTF-8 like any other", async () => {
    const root = join(scratch, `links-${++counter}`);
    await mkdir(root);
    await writeFile(join(root, "one"), Buffer.alloc(500));
    await link(join(root, "one"), join(root, "two"));
    await writeFile(Buffer.concat([Buffer.from(`${root}/`), Buffer.from([0xff, 0xfe])]), "abc");
    expect(await measureTree(root, { budget })).toMatchObject({ total: { bytes: 503, entries: 3 }, lowerBound: null });
  });

  it("stops at the entry budget with a lower bound", async () => {
    const { root, workspace } = await knownTree();
    const measured = await measureTree(root, { budget: { timeMs: 10_000, entries: 4 }, part: workspace });
    expect(measured.lowerBound).toBe("entry_budget");
    expect(measured.total.entries).toBe(4);
    expect(measured.total.bytes).toBeLessThanOrEqual(1_023);
  });

  it("stops at the time budget with a lower bound", async () => {
    const { root, workspace } = await knownTree();
    let clock = 0;
    const measured = await measureTree(root, { budget: { timeMs: 2, entries: 1_000 }, part: workspace, now: () => clock++ });
    expect(measured.lowerBound).toBe("time_budget");
    expect(measured.total.entries).toBeLessThan(10);
  });

  it("refuses a root that is a link", async () => {
    const { root } = await knownTree();
    const linked = join(scratch, `root-link-${counter}`);
    await symlink(root, linked);
    await expect(measureTree(linked, { budget })).rejects.toThrow(/not a directory/);
  });
});

describe("the local provider's measureSandbox", () => {
  it("is advertised and measures the lease's own sandbox: its workspace exactly, the whole sandbox with its records", async () => {
    const instanceRoot = join(scratch, `instance-${++counter}`);
    const provider = createLocalProvider({ instanceRoot, isolation: "none" });
    expect(provider.capabilities.has("measureSandbox")).toBe(true);
    const leaseId = "0b6d1c52-2f7e-4a8b-9c3d-4e5f6a7b8c9d";
    const allocation = await provider.acquire!({ companyId: "c", environmentId: "e", leaseId, runId: "r", config: {} });
    const handle = { leaseId, pluginId: "builtin.local", providerLeaseId: allocation.identity.providerLeaseId };
    const workspace = join(instanceRoot, "sandboxes", handle.providerLeaseId, "workspace");
    await writeFile(join(workspace, "report.txt"), "unexported work\n");
    await symlink("/etc/passwd", join(workspace, "passwd"));
    await provider.stopLease!(handle, { requestId: "8c1f2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b" });
    const measured = await provider.measureSandbox!(handle, { budget });
    expect(measured.workspace).toEqual({ bytes: 16, entries: 2 });
    expect(measured.sandbox!.bytes).toBeGreaterThan(16);
    expect(measured.sandbox!.entries).toBeGreaterThan(2);
    expect(measured.lowerBound).toBeNull();
    await expect(provider.measureSandbox!({ ...handle, leaseId: "1b6d1c52-2f7e-4a8b-9c3d-4e5f6a7b8c9d" }, { budget })).rejects.toMatchObject({ code: "provider_identity_mismatch" });
  });
});
