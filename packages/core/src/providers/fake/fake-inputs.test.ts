// R-RC-5: the fake provider's placeInputs (in memory): all or nothing, outside the workspace (never
// exported), seen by an exec script at the paths it answered, removed by a new seed; a fake
// without the capability (an older plugin) advertises none.
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { hasCapability } from "../registry";
import { PROVIDER_CAPABILITIES, type LeaseHandle, type SandboxInput } from "../types";
import type { FakeExecContext } from "./exec";
import { createFakeProvider } from "./fake-provider";
import { fakeInputsDirectory } from "./inputs";
import { readWorkspaceTar } from "./virtual-workspace";

const ID = "7d0c8f5e-3b1a-4c2d-9e8f-0a1b2c3d4e5f";
const input = (relativePath: string, content: string): SandboxInput => ({ relativePath, sizeBytes: Buffer.byteLength(content), open: async () => Readable.from([Buffer.from(content)]) });

async function sandbox(seen?: (context: FakeExecContext) => void) {
  const provider = createFakeProvider({ script: (context) => (seen?.(context), { exitCode: 0 }) });
  const allocation = await provider.acquire!({ companyId: "c", environmentId: "e", leaseId: "lease-1", runId: "run-1", config: {} });
  const handle: LeaseHandle = { leaseId: "lease-1", pluginId: provider.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
  return { provider, handle };
}

describe("fake provider inputs (R-RC-5)", () => {
  it("R-RC-5 places the inputs beside the workspace, and the agent's script reads them at the answered paths", async () => {
    let inputs: ReadonlyMap<string, Uint8Array> = new Map();
    const { provider, handle } = await sandbox((context) => (inputs = context.inputs));
    expect(hasCapability(provider, "placeInputs")).toBe(true);
    const placed = await provider.placeInputs!(handle, [input(`${ID}/notes.md`, "saved notes\n")]);
    const directory = fakeInputsDirectory(handle.providerLeaseId);
    expect(placed).toEqual({ directory, paths: [`${directory}/${ID}/notes.md`], readOnly: true });
    await provider.exec!(handle, { argv: ["agent"], env: {}, timeoutMs: 10_000 });
    expect(Buffer.from(inputs.get(placed.paths[0] as string) ?? []).toString()).toBe("saved notes\n");
    expect((await readWorkspaceTar(await provider.exportWorkspace!(handle))).size).toBe(0);
  });

  it("R-RC-5 a stream that errors, or bytes of another size, place nothing; a new seed removes earlier inputs", async () => {
    const { provider, handle } = await sandbox();
    await provider.placeInputs!(handle, [input(`${ID}/a.md`, "first")]);
    const failing: SandboxInput = { relativePath: `${ID}/b.md`, sizeBytes: 3, open: async () => Readable.from((async function* () { yield Buffer.from("x"); throw new Error("verification refused"); })()) };
    await expect(provider.placeInputs!(handle, [input(`${ID}/c.md`, "c"), failing])).rejects.toThrow("verification refused");
    await expect(provider.placeInputs!(handle, [{ ...input(`${ID}/c.md`, "c"), sizeBytes: 2 }])).rejects.toMatchObject({ code: "provider_input_incomplete" });
    const sandboxState = provider.store.get(handle.providerLeaseId);
    expect([...(sandboxState?.inputs?.keys() ?? [])]).toEqual([`${fakeInputsDirectory(handle.providerLeaseId)}/${ID}/a.md`]);
    await provider.seedWorkspace!(handle, Readable.from([Buffer.alloc(1024)]));
    expect(provider.store.get(handle.providerLeaseId)?.inputs).toBeUndefined();
  });

  it("R-RC-5 a rendered input is given the placement the fake answers and is read by the agent's script like the others", async () => {
    let inputs: ReadonlyMap<string, Uint8Array> = new Map();
    const { provider, handle } = await sandbox((context) => (inputs = context.inputs));
    const placed = await provider.placeInputs!(handle, [input(`${ID}/notes.md`, "saved notes\n"), { relativePath: "reconstruction.json", render: (p) => Buffer.from(JSON.stringify(p)) }]);
    const directory = fakeInputsDirectory(handle.providerLeaseId);
    expect(placed).toEqual({ directory, paths: [`${directory}/${ID}/notes.md`, `${directory}/reconstruction.json`], readOnly: true });
    await provider.exec!(handle, { argv: ["agent"], env: {}, timeoutMs: 10_000 });
    expect(JSON.parse(Buffer.from(inputs.get(`${directory}/reconstruction.json`) ?? []).toString())).toEqual(placed);
  });

  it("R-RC-5 a fake modelling an older plugin (without placeInputs) does not advertise it", () => {
    const older = createFakeProvider({ capabilities: PROVIDER_CAPABILITIES.filter((c) => c !== "placeInputs") });
    expect(hasCapability(older, "placeInputs")).toBe(false);
  });
});
