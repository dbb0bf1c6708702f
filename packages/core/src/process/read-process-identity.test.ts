// R-OWN-12 with real processes: spawn, record, kill, probe.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { probeProcess, readProcStat, readProcessIdentity } from "./read-process-identity";

const children: ChildProcess[] = [];

function start(argv: string[]): ChildProcess {
  const child = spawn(argv[0] as string, argv.slice(1), { stdio: ["ignore", "pipe", "ignore"] });
  children.push(child);
  return child;
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("readProcessIdentity / probeProcess", () => {
  it("R-OWN-12 records a live child's start time, boot id and host; it probes alive", async () => {
    const child = start(["sleep", "1000"]);
    await once(child, "spawn");
    const identity = await readProcessIdentity(child.pid as number);
    expect(identity).not.toBeNull();
    expect(identity?.pid).toBe(child.pid);
    expect(identity?.startTime).toMatch(/^\d+$/);
    expect(identity?.bootId).toMatch(/^[0-9a-f-]{36}$/);
    expect(identity?.host).toBe(hostname());
    expect(await probeProcess(identity!)).toEqual({ kind: "alive" });
  });

  it("R-OWN-12 a killed child probes dead (no_such_pid) and has no identity any more", async () => {
    const child = start(["sleep", "1000"]);
    await once(child, "spawn");
    const identity = (await readProcessIdentity(child.pid as number))!;
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(await probeProcess(identity)).toEqual({ kind: "dead", reason: "no_such_pid" });
    expect(await readProcessIdentity(identity.pid)).toBeNull();
  });

  it("R-OWN-12 a forged identity with a wrong start time for a live PID reads pid_reused", async () => {
    const child = start(["sleep", "1000"]);
    await once(child, "spawn");
    const identity = (await readProcessIdentity(child.pid as number))!;
    const forged = { ...identity, startTime: String(BigInt(identity.startTime) + 1n) };
    expect(await probeProcess(forged)).toEqual({ kind: "dead", reason: "pid_reused" });
  });

  it("R-OWN-12 another boot id reads rebooted, another host reads unknown", async () => {
    const identity = (await readProcessIdentity(process.pid))!;
    expect(await probeProcess({ ...identity, bootId: "00000000-0000-0000-0000-000000000000" })).toEqual({ kind: "dead", reason: "rebooted" });
    expect(await probeProcess({ ...identity, host: `${identity.host}-elsewhere` })).toEqual({ kind: "unknown", reason: "other_host" });
  });

  it("R-OWN-12 a zombie (exited, not yet collected by its parent) reads dead", async () => {
    // The shell starts a child that waits for one byte on the test's pipe, then becomes `sleep`,
    // which never waits for it. The byte is sent only once the shell is `sleep`: a child that
    // exited while the shell still ran could be collected by it (no zombie; seen under load).
    const child = spawn("sh", ["-c", "exec 3<&0; head -c 1 <&3 >/dev/null & echo $!; exec sleep 1000"], { stdio: ["pipe", "pipe", "ignore"] });
    children.push(child);
    const [data] = (await once(child.stdout!, "data")) as [Buffer];
    const zombiePid = Number(data.toString().trim());
    await until(async () => (await readFile(`/proc/${child.pid}/comm`, "utf8").catch(() => "")).trim() === "sleep");
    child.stdin!.write("x");
    await until(async () => {
      const stat = await readProcStat(zombiePid);
      return typeof stat !== "string" && stat.state === "Z";
    });
    const identity = (await readProcessIdentity(zombiePid))!;
    expect(await probeProcess(identity)).toEqual({ kind: "dead", reason: "zombie" });
  });

  it("an unreadable /proc answers unknown, never dead", async () => {
    const identity = (await readProcessIdentity(process.pid))!;
    const empty = await mkdtemp(join(tmpdir(), "copyback-proc-"));
    try {
      expect(await probeProcess(identity, { procRoot: empty })).toEqual({ kind: "unknown", reason: "unreadable" });
      expect(await readProcessIdentity(process.pid, { procRoot: empty })).toBeNull();
    } finally {
      await rm(empty, { recursive: true });
    }
  });
});
