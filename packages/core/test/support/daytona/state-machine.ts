// Daytona's sandbox lifecycle as a pure function: which user action is legal from which
// state, the transitional state the API answers with, and the state it settles into.
// The emulator applies the result; tests of the rules need no server.
export type SandboxState =
  | "creating"
  | "starting"
  | "started"
  | "stopping"
  | "stopped"
  | "archiving"
  | "archived"
  | "destroying"
  | "destroyed"
  | "error";

export type LifecycleAction = "start" | "stop" | "archive" | "delete";

export type TransitionResult =
  | { kind: "move"; transitional: SandboxState; settled: SandboxState }
  | { kind: "noop" }
  | { kind: "illegal"; status: 400 | 409; message: string };

const TRANSITIONAL: ReadonlySet<SandboxState> = new Set(["creating", "starting", "stopping", "archiving", "destroying"]);

export function isTransitional(state: SandboxState): boolean {
  return TRANSITIONAL.has(state);
}

/** What a user action does from `state` (Daytona answers a conflicting in-flight state with 409, a wrong state with 400). */
export function transition(state: SandboxState, action: LifecycleAction): TransitionResult {
  if (state === "destroyed") return { kind: "illegal", status: 400, message: "Sandbox is destroyed" };
  if (action === "delete") {
    if (state === "destroying") return { kind: "noop" };
    return { kind: "move", transitional: "destroying", settled: "destroyed" };
  }
  if (isTransitional(state)) {
    return { kind: "illegal", status: 409, message: `Sandbox state change in progress (state: ${state})` };
  }
  switch (action) {
    case "start":
      if (state === "started") return { kind: "noop" };
      if (state === "stopped" || state === "archived" || state === "error") {
        return { kind: "move", transitional: "starting", settled: "started" };
      }
      break;
    case "stop":
      if (state === "started") return { kind: "move", transitional: "stopping", settled: "stopped" };
      return { kind: "illegal", status: 400, message: `Sandbox is not started (state: ${state})` };
    case "archive":
      if (state === "stopped") return { kind: "move", transitional: "archiving", settled: "archived" };
      return { kind: "illegal", status: 400, message: `Sandbox is not stopped (state: ${state})` };
  }
  return { kind: "illegal", status: 400, message: `Cannot ${action} a sandbox in state ${state}` };
}

/** The toolbox (files, processes) answers only while the sandbox runs. */
export function toolboxAvailable(state: SandboxState): boolean {
  return state === "started";
}
