import { describe, expect, it } from "vitest";
import { bubblewrapArgs } from "./bubblewrap";
import { agentEnvironment, checkExecRequest, cwdComponents } from "./exec-environment";

describe("exec environment", () => {
  it("cwd stays inside the workspace", () => {
    expect(cwdComponents(undefined)).toEqual([]);
    expect(cwdComponents(".")).toEqual([]);
    expect(cwdComponents("a/./b/")).toEqual(["a", "b"]);
    expect(cwdComponents("a/../b")).toEqual(["b"]);
    expect(cwdComponents("..")).toBeNull();
    expect(cwdComponents("a/../../b")).toBeNull();
    expect(cwdComponents("/etc")).toBeNull();
    expect(cwdComponents("a\0b")).toBeNull();
  });

  it("the agent's environment is minimal; the provider alone decides the result file", () => {
    const env = agentEnvironment({ path: "/bin", workspace: "/w", resultFile: "/c/result.json", extra: { FOO: "1", COPYBACK_RESULT_FILE: "/elsewhere" } });
    expect(env).toEqual({ PATH: "/bin", HOME: "/w", LANG: "C.UTF-8", FOO: "1", COPYBACK_RESULT_FILE: "/c/result.json" });
  });

  it("refuses unusable requests", () => {
    const ok = { argv: ["true"], env: {}, timeoutMs: 1000 };
    expect(() => checkExecRequest(ok)).not.toThrow();
    expect(() => checkExecRequest({ ...ok, argv: [] })).toThrow(expect.objectContaining({ code: "exec_argv_invalid" }));
    expect(() => checkExecRequest({ ...ok, argv: ["a\0"] })).toThrow(expect.objectContaining({ code: "exec_argv_invalid" }));
    expect(() => checkExecRequest({ ...ok, env: { "A=B": "x" } })).toThrow(expect.objectContaining({ code: "exec_env_invalid" }));
    expect(() => checkExecRequest({ ...ok, timeoutMs: 0 })).toThrow(expect.objectContaining({ code: "exec_timeout_invalid" }));
  });

  it("bubblewrap: read-only root, hidden instance root, writable sandbox, no network unless allowed", () => {
    const mounts = { instanceRoot: "/srv/cb", workspace: "/srv/cb/sandboxes/s/workspace", agentDir: "/srv/cb/sandboxes/s/control/agent", cwd: "/srv/cb/sandboxes/s/workspace", allowNetwork: false };
    const args = bubblewrapArgs(mounts, ["node", "agent.js"]);
    const at = (flag: string, from = 0) => args.indexOf(flag, from);
    expect(args.slice(0, 3)).toEqual(["--ro-bind", "/", "/"]);
    // The instance root is hidden before the sandbox's own directories are bound back on top.
    const hidden = args.findIndex((a, i) => a === "--tmpfs" && args[i + 1] === "/srv/cb");
    expect(hidden).toBeGreaterThan(0);
    expect(at("--bind")).toBeGreaterThan(hidden);
    expect(args).toContain("--unshare-net");
    expect(args).toContain("--unshare-pid");
    expect(args).toContain("--die-with-parent");
    expect(args.slice(-3)).toEqual(["--", "node", "agent.js"]);
    expect(bubblewrapArgs({ ...mounts, allowNetwork: true }, ["x"])).not.toContain("--unshare-net");
  });
});
