// The fake provider's measureSandbox: opt-in (off by default, on for the built-in registration),
// the workspace's file bytes and entries (implied parent directories counted), the inputs in the
// whole sandbox, the entry budget's lower bound, and injectable failures.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createDefaultRegistry } from "../default-registry";
import { hasCapability } from "../registry";
import { createFakeProvider } from "./fake-provider";

const LEASE = "5d0c8f5e-3b1a-4c2d-9e8f-0a1b2c3d4e5f";
const budget = { timeMs: 1_000, entries: 1_000 };

async function sandboxWithFiles(measure = true) {
  const provider = createFakeProvider({ measureSandbox: measure, script: () => ({ files: { "a.txt": "hello", "src/lib/b.txt": "0123456789", link: { symlink: "/etc/passwd" } } }) });
  const allocation = await provider.acquire!({ companyId: "c", environmentId: "e", leaseId: LEASE, runId: "r", config: {} });
  const handle = { leaseId: LEASE, pluginId: "builtin.fake", providerLeaseId: allocation.identity.providerLeaseId };
  await provider.exec!(handle, { argv: ["agent"], env: {}, timeoutMs: 1_000 });
  return { provider, handle };
}

describe("the fake provider's measureSandbox", () => {
  it("is not advertised by default; the built-in registration offers it", () => {
    expect(hasCapability(createFakeProvider(), "measureSandbox")).toBe(false);
    const builtin = createDefaultRegistry({ instanceRoot: "/nonexistent-copyback-root" }).get("builtin.fake")!;
    expect(hasCapability(builtin, "measureSandbox")).toBe(true);
  });

  it("counts file bytes and entries, links as entries of no bytes, inputs in the whole sandbox", async () => {
    const { provider, handle } = await sandboxWithFiles();
    // a.txt, link, src, src/lib, src/lib/b.txt
    expect(await provider.measureSandbox!(handle, { budget })).toEqual({ workspace: { bytes: 15, entries: 5 }, sandbox: { bytes: 15, entries: 5 }, lowerBound: null });
    await provider.placeInputs!(handle, [{ relativePath: "att/notes.md", sizeBytes: 4, open: async () => Readable.from([Buffer.from("note")]) }]);
    expect(await provider.measureSandbox!(handle, { budget })).toMatchObject({ workspace: { bytes: 15, entries: 5 }, sandbox: { bytes: 19, entries: 6 } });
  });

  it("stops at the entry budget with a lower bound", async () => {
    const { provider, handle } = await sandboxWithFiles();
    const measured = await provider.measureSandbox!(handle, { budget: { timeMs: 1_000, entries: 2 } });
    expect(measured).toMatchObject({ workspace: { entries: 2 }, sandbox: null, lowerBound: "entry_budget" });
  });

  it("fails on demand and for a sandbox that is not there", async () => {
    const { provider, handle } = await sandboxWithFiles();
    provider.faults.failTimes("measureSandbox", 1);
    await expect(provider.measureSandbox!(handle, { budget })).rejects.toMatchObject({ code: "provider_fault_injected" });
    await expect(provider.measureSandbox!({ ...handle, providerLeaseId: "fake-none" }, { budget })).rejects.toMatchObject({ code: "provider_sandbox_missing" });
    expect(provider.calls.filter((c) => c.op === "measureSandbox")).toHaveLength(2);
  });
});
