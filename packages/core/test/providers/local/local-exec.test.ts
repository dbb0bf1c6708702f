// The local provider's exec (local-exec.ts): the agent as a real process group in its
// workspace, its output and result file, timeouts and aborts that stop the whole group, and
// bubblewrap's isolation where it runs.
import { access, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ProcessIdentity } from "../../../src/process/process-identity";
import { cgroupParent, parseProcCgroup } from "../../../src/providers/local/cgroups";
import { MAX_RESULT_FILE_BYTES } from "../../../src/providers/local/result-file";
import { alive, descendants, ISOLATIONS, localProviderSetup, scratchDirectory, until } from "./local-provider-fixture";

const scratch = await scratchDirectory();
// Where this machine lets an exec have its own groups (as root here: the v1 hierarchies).
const memoryParent = await cgroupParent("memory");
const pidsParent = await cgroupParent("pids");

// Real processes on a small, busy machine: generous limits, no timed assertions.
describe.each(ISOLATIONS)("local provider (isolation %s)", { timeout: 30_000 }, (isolation) => {
  const { provider, expectIsolated, acquired, run } = localProviderSetup(scratch, isolation);

  it("runs the command in the workspace with a clean environment, streams UTF-8 output and returns the result file", async () => {
    const { p, handle, workspace, root } = await acquired();
    await mkdir(join(workspace, "sub"));
    process.env.COPYBACK_TEST_CONTROLLER_SECRET = "leak";
    let started: ProcessIdentity | null = null;
    let recorded = "";
    const script = [
      "echo made > made.txt",
      "pwd",
      'echo "home=$HOME lang=$LANG extra=$EXTRA secret=${COPYBACK_TEST_CONTROLLER_SECRET:-none}"',
      // An emoji split across two writes (and so two chunks): decoded whole.
      "printf '\\360\\237'; sleep 0.2; printf '\\230\\200\\n'",
      "echo oops >&2",
      'printf \'{"outcome":"done"}\' > "$COPYBACK_RESULT_FILE"',
      "exit 7",
    ].join("\n");
    const { result, output } = run(p, handle, ["sh", "-c", script], {
      cwd: "sub",
      env: { EXTRA: "yes" },
      onStart: async (identity) => {
        started = identity;
        recorded = await readFile(join(root, "control", "processes.json"), "utf8");
      },
    });
    const done = await result;
    delete process.env.COPYBACK_TEST_CONTROLLER_SECRET;
    expect(done).toMatchObject({ exitCode: 7, signal: null, timedOut: false, cancelled: false, resultFile: '{"outcome":"done"}' });
    expect(await readFile(join(workspace, "sub", "made.txt"), "utf8")).toBe("made\n");
    expect(output.stdout).toContain(`${join(workspace, "sub")}\n`);
    expect(output.stdout).toContain(`home=${workspace} lang=C.UTF-8 extra=yes secret=none`);
    expect(output.stdout).toContain("😀\n");
    expect(output.stdout).not.toContain("\ufffd");
    expect(output.stderr).toBe("oops\n");
    // R-OWN-12: onStart got the identity read from /proc, recorded before it was called.
    expect(started).not.toBeNull();
    expect(done.process).toEqual(started);
    expect(recorded).toContain(`"startTime": "${started!.startTime}"`);
    expect(await readdir(join(root, "control", "agent"))).toEqual([]);
    expect(JSON.parse(await readFile(join(root, "control", "processes.json"), "utf8")).processes).toEqual([]);
  });

  it("refuses a working directory outside the workspace or through a link, and starts nothing", async () => {
    const { p, handle, workspace } = await acquired();
    await symlink("/tmp", join(workspace, "out"));
    let started = false;
    const onStart = () => void (started = true);
    await expect(run(p, handle, ["touch", "x"], { cwd: "../control", onStart }).result).rejects.toMatchObject({ code: "exec_cwd_invalid" });
    await expect(run(p, handle, ["touch", "x"], { cwd: "out", onStart }).result).rejects.toMatchObject({ code: "exec_cwd_invalid" });
    expect(started).toBe(false);
  });

  it("a timeout kills the whole process group, background children included", async () => {
    const { p, handle } = await acquired();
    let leader: ProcessIdentity | null = null;
    const { result, output } = run(p, handle, ["sh", "-c", "sleep 1000 & sleep 1000 & echo ready; wait"], { timeoutMs: 60_000, onStart: (i) => void (leader = i) });
    await until(async () => leader !== null && output.stdout.includes("ready"));
    const tree = await descendants(leader!.pid);
    expect(tree.length).toBeGreaterThanOrEqual(2);
    // A second exec with a short timeout, so the first one's tree is known before it is killed.
    const short = await run(p, handle, ["sleep", "1000"], { timeoutMs: 200 }).result;
    expect(short).toMatchObject({ timedOut: true, cancelled: false, exitCode: expectIsolated ? expect.anything() : null });
    const abort = new AbortController();
    const second = run(p, handle, ["sh", "-c", "sleep 1000 & echo ready; wait"], { signal: abort.signal });
    await until(async () => second.output.stdout.includes("ready"));
    abort.abort();
    expect(await second.result).toMatchObject({ cancelled: true, timedOut: false });
    // The first one is still running (nothing stopped it); stop it through the sandbox.
    expect(await alive(tree[0]!)).toBe(true);
    const receipt = await p.stopLease!(handle, { requestId: "stop-t" });
    expect(receipt.confirmed).toBe(true);
    await result;
    for (const identity of tree) expect(await alive(identity)).toBe(false);
  });

  it("kills what the command left running in the background when it exits", async () => {
    const { p, handle, workspace } = await acquired();
    let leader: ProcessIdentity | null = null;
    const script = "sleep 1000 > /dev/null 2>&1 & echo ready; while [ ! -e go ]; do sleep 0.05; done";
    const { result, output } = run(p, handle, ["sh", "-c", script], { onStart: (i) => void (leader = i) });
    await until(async () => leader !== null && output.stdout.includes("ready"));
    const tree = await descendants(leader!.pid);
    expect(tree.length).toBeGreaterThan(0);
    await writeFile(join(workspace, "go"), "");
    expect((await result).exitCode).toBe(0);
    for (const identity of tree) expect(await alive(identity)).toBe(false);
  });

  it("refuses a result file over 1 MiB or behind a link, with a note on stderr", async () => {
    const { p, handle } = await acquired();
    const big = await run(p, handle, ["sh", "-c", `head -c ${MAX_RESULT_FILE_BYTES + 1} /dev/zero > "$COPYBACK_RESULT_FILE"`]);
    expect((await big.result).resultFile).toBeNull();
    expect(big.output.stderr).toContain("larger than 1048576 bytes");
    const exact = await run(p, handle, ["sh", "-c", `head -c ${MAX_RESULT_FILE_BYTES} /dev/zero | tr '\\0' a > "$COPYBACK_RESULT_FILE"`]).result;
    expect(exact.resultFile?.length).toBe(MAX_RESULT_FILE_BYTES);
    const linked = await run(p, handle, ["sh", "-c", 'echo secret > "$HOME/s"; ln -s "$HOME/s" "$COPYBACK_RESULT_FILE"']);
    expect((await linked.result).resultFile).toBeNull();
    expect(linked.output.stderr).toContain("symbolic link");
  });

  it.skipIf(!memoryParent && !pidsParent)("the command and what it forks start in this exec's own memory and pids groups, joined before the command runs", async () => {
    const { p, handle } = await acquired();
    // The command's own groups, then a grandchild's (forked after the join: it must inherit them).
    const probe = run(p, handle, ["sh", "-c", "cat /proc/self/cgroup; echo --; sh -c 'cat /proc/self/cgroup'"]);
    expect((await probe.result).exitCode).toBe(0);
    const [own, forked] = probe.output.stdout.split("--\n");
    for (const text of [own!, forked!]) {
      const groups = parseProcCgroup(text);
      for (const [controller, parent] of [["memory", memoryParent], ["pids", pidsParent]] as const) {
        if (!parent) continue;
        const group = parent.version === 1 ? groups.v1.get(controller) : groups.v2;
        expect(group, `${controller} group`).toMatch(/\/copyback-[0-9a-f]{16}$/);
      }
    }
  });

  it("isolation: the agent writes only its sandbox and sees no other sandbox and no network when bubblewrap runs it", async () => {
    const { p, handle, root } = await acquired();
    const other = await acquired();
    const outsideFile = join(scratch, `written-by-agent-${isolation}`);
    await run(p, handle, ["sh", "-c", `echo x > ${outsideFile}`]).result;
    // Inside bubblewrap /tmp is private: the write may succeed there, but never reaches the host.
    expect(await access(outsideFile).then(() => true, () => false)).toBe(!expectIsolated);
    // The provider's own records are out of reach too (the instance root is an empty tmpfs inside).
    await run(p, handle, ["sh", "-c", `echo x > ${join(root, "control", "forged.json")}`]).result;
    expect(await access(join(root, "control", "forged.json")).then(() => true, () => false)).toBe(!expectIsolated);
    const peek = await run(p, handle, ["ls", other.workspace]).result;
    expect(peek.exitCode !== 0).toBe(expectIsolated);
    const identity = await run(p, handle, ["cat", join(root, "control", "identity.json")]).result;
    expect(identity.exitCode !== 0).toBe(expectIsolated);
    const net = run(p, handle, ["cat", "/proc/net/dev"]);
    await net.result;
    const interfaces = net.output.stdout.split("\n").slice(2).filter((l) => l.includes(":")).map((l) => l.split(":")[0]!.trim());
    expect(interfaces.every((name) => name === "lo")).toBe(expectIsolated);
  });

  it("allowNetwork keeps the host's network inside bubblewrap", async () => {
    const { p, handle } = await acquired(provider(), { allowNetwork: true });
    const net = run(p, handle, ["cat", "/proc/net/dev"]);
    await net.result;
    const interfaces = net.output.stdout.split("\n").slice(2).filter((l) => l.includes(":")).map((l) => l.split(":")[0]!.trim());
    const host = (await readFile("/proc/net/dev", "utf8")).split("\n").slice(2).filter((l) => l.includes(":")).map((l) => l.split(":")[0]!.trim());
    expect(interfaces.sort()).toEqual(host.sort());
  });
});
