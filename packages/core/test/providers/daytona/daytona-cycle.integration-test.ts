// The Daytona provider's whole cycle against the emulator through the real SDK: acquire, seed,
// exec (the agent edits the workspace), export byte for byte, stop (R-DT-1), inspect, resume,
// export again, destroy.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { manifestOf, useDaytona } from "./daytona-fixture";

const w = useDaytona();

describe("daytona provider: the whole cycle", { timeout: 60_000 }, () => {
  it("R-DT-1 acquire -> seed -> exec -> export -> stop -> inspect -> resume -> export -> destroy, files byte for byte", async () => {
    const { provider } = w();
    const a = await w().acquire({ autoDeleteMinutes: 60, labels: { team: "blue" } });
    const record = w().emulator.sandbox(a.sandboxId);
    expect(record.labels).toMatchObject({ team: "blue", "copyback.company": "company-1", "copyback.environment": "env-1", "copyback.lease": a.handle.leaseId, "copyback.run": a.runId });
    expect(record.autoDeleteInterval).toBe(60);

    const binary = Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 31) % 256));
    const seeded = await w().tree({ "README.md": "hello\n", "src/main.c": "int main(){}\n", "data/blob.bin": binary, "empty/": "", "link": { link: "src/main.c" } });
    await w().seed(a.handle, seeded);
    expect(await readFile(join(a.workspaceDir, "data/blob.bin"))).toEqual(binary);

    // The agent: edits, adds, removes, writes its result file; its output streams to the sink.
    const script = [
      "printf 'edited\\n' >> README.md",
      "mkdir -p new/deep && printf 'x%.0s' $(seq 1 5000) > new/deep/file.txt",
      "rm src/main.c && ln -sf README.md src/alias",
      "chmod 755 new",
      "echo 'to stdout'; echo 'to stderr' >&2",
      "printf '{\"ok\":true}' > \"$COPYBACK_RESULT_FILE\"",
      "exit 3",
    ].join("\n");
    const { result, output } = await w().exec(a.handle, ["sh", "-c", script]);
    expect(result).toMatchObject({ exitCode: 3, timedOut: false, cancelled: false, resultFile: '{"ok":true}' });
    expect(output.filter(([s]) => s === "stdout").map(([, c]) => c).join("")).toBe("to stdout\n");
    expect(output.filter(([s]) => s === "stderr").map(([, c]) => c).join("")).toBe("to stderr\n");

    const agentTree = await manifestOf(a.workspaceDir);
    const exported = await w().exportTree(a.handle);
    expect(exported.manifest).toEqual(agentTree);
    expect(await readFile(join(exported.dir, "data/blob.bin"))).toEqual(binary);
    expect(agentTree.entries.map((e) => e.path)).toContain("new/deep/file.txt");
    // The result file and copyback's own files are outside the exported tree.
    expect(agentTree.entries.some((e) => e.path.includes("result.json") || e.path.startsWith("copyback"))).toBe(false);

    // R-DT-1: auto-delete disabled and read back before the stop; the receipt is confirmed.
    const receipt = await provider.stopLease!(a.handle, { requestId: "stop-1" });
    expect(receipt).toMatchObject({ method: "environmentStopLease", requestId: "stop-1", pluginId: "builtin.daytona", providerLeaseId: a.handle.providerLeaseId, confirmed: true });
    expect(record.state).toBe("stopped");
    expect(record.autoDeleteInterval).toBe(-1);
    const inspected = await provider.inspect!(a.handle);
    expect(inspected).toMatchObject({ state: "stopped", identity: { providerLeaseId: a.handle.providerLeaseId, fingerprint: a.fingerprint }, remote: { state: "stopped", autoDelete: "disabled", autoDeleteMinutes: null } });
    expect(inspected.remote?.autoArchiveMinutes).toBeGreaterThan(0);
    expect((await stat(join(a.workspaceDir, "new/deep/file.txt"))).size).toBe(5000);

    const resumed = await provider.resume!(a.handle, { providerLeaseId: a.handle.providerLeaseId, fingerprint: a.fingerprint });
    expect(resumed.fingerprint).toBe(a.fingerprint);
    expect(record.state).toBe("started");
    expect((await w().exportTree(a.handle)).manifest).toEqual(agentTree);

    await provider.destroy!(a.handle);
    expect(() => w().emulator.sandbox(a.sandboxId)).toThrow();
    expect(await provider.inspect!(a.handle)).toMatchObject({ state: "missing" });
    await provider.destroy!(a.handle); // already gone: nothing to do
  });
});
