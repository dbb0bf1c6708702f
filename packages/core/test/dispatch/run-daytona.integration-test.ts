// A run on a Daytona environment (the real plugin, the emulator as its endpoint) through the
// product's dispatch and finalization path: wake -> claim -> acquire -> seed -> the agent in the
// sandbox -> delta export -> merge -> commit, with the host's bytes exactly the sandbox's.
import { describe, expect, it } from "vitest";
import { readTree, submitResult } from "./dispatch-fixture";
import { useDaytonaDispatch } from "./daytona-dispatch-fixture";

const world = useDaytonaDispatch();

type Payload = Record<string, unknown>;

describe("a run on Daytona (emulator)", { timeout: 90_000 }, () => {
  it("R-DT-2 R-LK-6 wake -> commit through the delta export: edits, a delete, a new file and a symlink land on the host byte for byte", async () => {
    const task = await world.daytonaTask({
      files: { "keep.txt": "keep\n", "edit.txt": "original\n", "delete-me.txt": "bye\n", "src/a.c": "int a;\n" },
      script: ["printf 'edited\\n' > edit.txt", "rm delete-me.txt", "mkdir -p new && printf 'fresh\\n' > new/file.txt", "ln -s keep.txt link", submitResult()].join(" && "),
    });
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run.status).toBe("succeeded");
    expect(s.coordinator?.phase).toBe("committed");
    expect(await readTree(task.hostPath)).toEqual({
      "keep.txt": { type: "file", content: "keep\n" },
      "edit.txt": { type: "file", content: "edited\n" },
      new: { type: "dir" },
      "new/file.txt": { type: "file", content: "fresh\n" },
      link: { type: "symlink", target: "keep.txt" },
      src: { type: "dir" },
      "src/a.c": { type: "file", content: "int a;\n" },
    });
    const exported = s.events.filter((e) => e.code === "workspace.exported").map((e) => e.payload as Payload);
    expect(exported).toHaveLength(1);
    expect(exported[0]).toMatchObject({ path: "delta", try: 1, removed: 1 });
    expect(exported[0]?.bytes).toBe("edited\n".length + "fresh\n".length);
    expect(s.codes).not.toContain("workspace.delta_fallback");
    expect(s.leases).toHaveLength(1);
    expect(s.leases[0]).toMatchObject({ pluginId: "builtin.daytona", provider: "daytona" });
    expect(s.leases[0]?.providerLeaseId).toMatch(/^daytona:/);
    // R-DT-2: the ephemeral allocation got its acquisition-time sentinel; the run's end destroyed it.
    expect((s.leases[0]?.metadata as Record<string, unknown>).workspaceSentinel).toMatchObject({ runId, leaseId: s.leases[0]?.id });
    expect(s.leases[0]?.status).toBe("destroyed");
    expect(() => world.emulator.sandbox(world.sandboxIdOf(s.leases[0]!.providerLeaseId))).toThrow();
  });
});
