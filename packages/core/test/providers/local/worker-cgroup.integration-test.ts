// Issue 22 part 5: a process that joins its worker cgroup is in it (the kernel says so), its
// identity names exactly that group on this boot, and the exec groups it makes afterwards nest
// inside it, so an agent's processes are counted as the worker's too.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, rmdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { workerCgroupPlace } from "../../../src/providers/local/worker-cgroup";

const place = await workerCgroupPlace();
const script = path.resolve(import.meta.dirname, "../../support/cgroup/join-worker-cgroup.ts");

describe.skipIf(!place)(`joinWorkerCgroup${place ? "" : " (skipped: this machine lets no process make a cgroup)"}`, () => {
  it("R-RW-1 moves the process into a copyback-worker group of its own, names it with this boot, and nests later exec groups inside it", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", script], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    const exited = once(child, "exit");
    for (let i = 0; i < 400 && !out.includes("\n") && child.exitCode === null; i += 1) await new Promise((r) => setTimeout(r, 50));
    expect(err).toBe("");
    const report = JSON.parse(out.split("\n")[0]!) as { identity: { path: string; version: number; bootId: string }; dir: string; execJoins: string[] };
    try {
      expect(report.identity).toMatchObject({ kind: "worker_cgroup", version: place!.version, bootId: (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim() });
      expect(report.identity.path).toMatch(/\/copyback-worker-[0-9a-f]{16}$/);
      expect(path.dirname(report.identity.path)).toBe(path.resolve("/", place!.parentPath));
      expect(report.dir).toBe(path.join(place!.mountPoint, report.identity.path));
      // The kernel lists the child in exactly that group.
      expect((await readFile(path.join(report.dir, "cgroup.procs"), "utf8")).split("\n")).toContain(String(child.pid));
      // The exec's pids group is below the worker's.
      expect(report.execJoins.some((file) => file.startsWith(`${report.dir}/copyback-`))).toBe(true);
    } finally {
      child.stdin.end();
      await exited;
      for (let i = 0; i < 80 && (await rmdir(report.dir).then(() => false, () => true)); i += 1) await new Promise((r) => setTimeout(r, 25));
    }
  });
});
