// R-RC-5: the local provider's placeInputs with real directories and real processes, once as a
// plain process group and once as configured by default ("auto": bubblewrap where it works here;
// the read-only assertions follow `isolated`). The agent reads its inputs at the path it is told,
// they are never part of the exported workspace, and a failed stream places nothing.
import { createHash } from "node:crypto";
import { lstat, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { readWorkspaceTar } from "../fake/virtual-workspace";
import type { EnvironmentProvider, LeaseHandle, PlacedInputs, SandboxInput } from "../types";
import { bubblewrapArgs, usableBubblewrap } from "./bubblewrap";
import { hostSearchPath } from "./env";
import { createLocalProvider, type LocalIsolation } from "./local-provider";

const scratch = await mkdtemp(join(tmpdir(), "copyback-inputs-"));
afterAll(async () => rm(scratch, { recursive: true, force: true }));
const bubblewrapHere = (await usableBubblewrap(hostSearchPath())) !== null;
const ID = "7d0c8f5e-3b1a-4c2d-9e8f-0a1b2c3d4e5f";
const sha256 = (bytes: string | Buffer) => createHash("sha256").update(bytes).digest("hex");
let counter = 0;

const input = (relativePath: string, content: string): SandboxInput => ({ relativePath, sizeBytes: Buffer.byteLength(content), open: async () => Readable.from([Buffer.from(content)]) });
const failing = (relativePath: string): SandboxInput => ({
  relativePath,
  sizeBytes: 10,
  open: async () =>
    new Readable({
      read() {
        this.push(Buffer.from("half"));
        this.destroy(new Error("verification refused"));
      },
    }),
});

describe.each<LocalIsolation>(["none", "auto"])("local provider inputs (isolation %s)", { timeout: 30_000 }, (isolation) => {
  const instanceRoot = join(scratch, `instance-${isolation}`);
  const provider = () => createLocalProvider({ instanceRoot, isolation, killGraceMs: 500 });
  const expectIsolated = isolation === "auto" && bubblewrapHere;

  async function acquired(p: EnvironmentProvider = provider()) {
    const leaseId = `inputs-${Date.now().toString(36)}-${++counter}`;
    const allocation = await p.acquire!({ companyId: "c", environmentId: "e", leaseId, runId: `run-${leaseId}`, config: {} });
    const handle: LeaseHandle = { leaseId, pluginId: "builtin.local", providerLeaseId: allocation.identity.providerLeaseId };
    const root = join(instanceRoot, "sandboxes", handle.providerLeaseId);
    return { p, handle, root, workspace: join(root, "workspace"), inputs: join(root, "control", "inputs") };
  }

  async function agent(p: EnvironmentProvider, handle: LeaseHandle, script: string) {
    let stdout = "";
    const result = await p.exec!(handle, { argv: [process.execPath, "-e", script], env: {}, timeoutMs: 60_000, onOutput: (s, c) => void (s === "stdout" && (stdout += c)) });
    return { exitCode: result.exitCode, stdout };
  }

  it("R-RC-5 places every input outside the workspace, 0400, and the agent reads it at the path it is told", async () => {
    const { p, handle, workspace, inputs } = await acquired();
    const placed = await p.placeInputs!(handle, [input(`${ID}/notes.md`, "saved notes\n"), input(`${ID}/more.md`, "more\n")]);
    expect(placed).toEqual({ directory: inputs, paths: [join(inputs, ID, "notes.md"), join(inputs, ID, "more.md")], readOnly: expectIsolated });
    expect(placed.directory.startsWith(workspace)).toBe(false);
    expect((await stat(placed.paths[0] as string)).mode & 0o777).toBe(0o400);
    const read = await agent(p, handle, `const fs=require("fs"),c=require("crypto");process.stdout.write(c.createHash("sha256").update(fs.readFileSync(${JSON.stringify(placed.paths[0])})).digest("hex"))`);
    expect(read).toEqual({ exitCode: 0, stdout: sha256("saved notes\n") });
    // Never exported: the workspace's archive holds no input.
    expect([...(await readWorkspaceTar(await p.exportWorkspace!(handle))).keys()]).toEqual([]);
  });

  it("R-RC-5 under bubblewrap the agent cannot change or remove its inputs (a plain process group runs with the controller's rights)", async () => {
    const { p, handle } = await acquired();
    const placed = await p.placeInputs!(handle, [input(`${ID}/notes.md`, "saved notes\n")]);
    const file = placed.paths[0] as string;
    const tried = await agent(p, handle, `const fs=require("fs");let w="no",r="no";try{fs.chmodSync(${JSON.stringify(file)},0o600);fs.writeFileSync(${JSON.stringify(file)},"forged")}catch{w="refused"}try{fs.rmSync(${JSON.stringify(file)})}catch{r="refused"}process.stdout.write(w+" "+r)`);
    if (expectIsolated) {
      expect(tried.stdout).toBe("refused refused");
      expect(await readFile(file, "utf8")).toBe("saved notes\n");
    } else {
      expect(tried.exitCode).toBe(0);
    }
  });

  it("R-RC-5 a stream that errors places nothing (all or nothing) and leaves no staging behind; earlier inputs stay as they were", async () => {
    const { p, handle, root, inputs } = await acquired();
    await expect(p.placeInputs!(handle, [input(`${ID}/a.md`, "a"), failing(`${ID}/b.md`)])).rejects.toThrow("verification refused");
    await expect(lstat(inputs)).rejects.toMatchObject({ code: "ENOENT" });
    await p.placeInputs!(handle, [input(`${ID}/a.md`, "first")]);
    await expect(p.placeInputs!(handle, [failing(`${ID}/b.md`)])).rejects.toThrow();
    expect(await readFile(join(inputs, ID, "a.md"), "utf8")).toBe("first");
    expect((await readdir(join(root, "control"))).filter((n) => n.startsWith(".inputs"))).toEqual([]);
  });

  it("R-RC-5 a second placement replaces the first; a new seed removes them (they belonged to the earlier run)", async () => {
    const { p, handle, inputs } = await acquired();
    await p.placeInputs!(handle, [input(`${ID}/a.md`, "first")]);
    await p.placeInputs!(handle, [input(`${ID}/b.md`, "second")]);
    expect(await readdir(join(inputs, ID))).toEqual(["b.md"]);
    await p.seedWorkspace!(handle, Readable.from([Buffer.alloc(1024)]));
    await expect(lstat(inputs)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("R-RC-5 a sandbox holding read-only inputs is destroyed whole", async () => {
    const { p, handle, root } = await acquired();
    await p.placeInputs!(handle, [input(`${ID}/a.md`, "kept until destroyed")]);
    await p.destroy!(handle);
    await expect(lstat(root)).rejects.toMatchObject({ code: "ENOENT" });
    expect((await readdir(join(instanceRoot, "sandboxes"))).filter((n) => n.includes(handle.providerLeaseId))).toEqual([]);
  });

  it("R-RC-5 a rendered input directly in the inputs directory gets exactly the placement the provider answers, written 0400 like the others", async () => {
    const { p, handle, inputs } = await acquired();
    const seen: PlacedInputs[] = [];
    const rendered: SandboxInput = { relativePath: "reconstruction.json", render: (placed) => (seen.push(placed), Buffer.from(JSON.stringify(placed))) };
    const placed = await p.placeInputs!(handle, [input(`${ID}/notes.md`, "saved notes\n"), rendered]);
    expect(placed.paths).toEqual([join(inputs, ID, "notes.md"), join(inputs, "reconstruction.json")]);
    expect(seen).toEqual([placed]);
    expect(JSON.parse(await readFile(join(inputs, "reconstruction.json"), "utf8"))).toEqual(placed);
    expect((await stat(join(inputs, "reconstruction.json"))).mode & 0o777).toBe(0o400);
    // A file named like another input's folder is refused before anything is written.
    await expect(p.placeInputs!(handle, [input(`${ID}/a.md`, "a"), { relativePath: ID, render: () => Buffer.from("x") }])).rejects.toMatchObject({ code: "provider_input_path_invalid" });
    expect(await readdir(inputs)).toEqual(expect.arrayContaining([ID, "reconstruction.json"]));
  });

  it("R-RC-5 refuses an input path that could leave its directory, and bytes of another size than announced", async () => {
    const { p, handle, inputs } = await acquired();
    await expect(p.placeInputs!(handle, [input("../escape", "x")])).rejects.toMatchObject({ code: "provider_input_path_invalid" });
    await expect(p.placeInputs!(handle, [{ ...input(`${ID}/a.md`, "abc"), sizeBytes: 4 }])).rejects.toMatchObject({ code: "provider_input_incomplete" });
    await expect(lstat(inputs)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("bubblewrap mounts of a sandbox's inputs (R-RC-5)", () => {
  it("R-RC-5 the inputs directory is bound read-only at its own path, on top of the writable agent directory", () => {
    const mounts = { instanceRoot: "/srv/cb", workspace: "/srv/cb/s/workspace", agentDir: "/srv/cb/s/control/agent", inputsDir: "/srv/cb/s/control/inputs", cwd: "/srv/cb/s/workspace", allowNetwork: false };
    const args = bubblewrapArgs(mounts, ["node"]);
    const ro = args.findIndex((a, i) => a === "--ro-bind" && args[i + 1] === mounts.inputsDir);
    expect(args.slice(ro, ro + 3)).toEqual(["--ro-bind", mounts.inputsDir, mounts.inputsDir]);
    expect(ro).toBeGreaterThan(args.findIndex((a, i) => a === "--bind" && args[i + 1] === mounts.agentDir));
    expect(bubblewrapArgs({ ...mounts, inputsDir: null }, ["node"])).not.toContain(mounts.inputsDir);
  });
});
