import { describe, expect, it } from "vitest";
import { createPassLogFilter } from "../src/reconcile-log";

describe("reconciler pass log", () => {
  it("logs a pass that acted or failed, every time", () => {
    const filter = createPassLogFilter();
    expect(filter({ finalization: { committed: 1 } }, 0).log).toBe(true);
    expect(filter({ finalization: { committed: 1 } }, 0).log).toBe(true);
    expect(filter({}, 1).log).toBe(true);
    expect(filter({}, 1).log).toBe(true);
  });

  it("logs a pass that only left units alone once, until what it leaves changes", () => {
    const filter = createPassLogFilter();
    const held = { orphans: { left_finalizer_owns: 1 } };
    expect(filter(held, 0)).toEqual({ log: true, outcomes: held });
    expect(filter(held, 0).log).toBe(false);
    expect(filter({ orphans: { left_finalizer_owns: 1 }, finalization: {} }, 0).log).toBe(false);
    // A second held run, then the same again, then none.
    expect(filter({ orphans: { left_finalizer_owns: 2 } }, 0).log).toBe(true);
    expect(filter({ orphans: { left_finalizer_owns: 2 } }, 0).log).toBe(false);
    expect(filter({}, 0).log).toBe(true);
    expect(filter({}, 0).log).toBe(false);
  });

  it("a pass that acted beside left units is logged and does not hide a later change", () => {
    const filter = createPassLogFilter();
    expect(filter({ orphans: { left_finalizer_owns: 1, failed: 1 } }, 0).log).toBe(true);
    expect(filter({ orphans: { left_finalizer_owns: 1 } }, 0).log).toBe(false);
    expect(filter({ orphans: { left_agent_survived: 1 } }, 0).log).toBe(true);
  });

  it("a quiet reconciler with nothing to report writes nothing", () => {
    const filter = createPassLogFilter();
    expect(filter({}, 0).log).toBe(false);
    expect(filter({ finalization: {}, orphans: {} }, 0).log).toBe(false);
  });
});
