// The history's writer: an operation's invoke and its one completion share `op` and `ev`, a
// second completion is refused, and the reader pairs what the writer wrote.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readOperations } from "./checker/operations";
import { History, readHistory } from "./history";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function history(): History {
  const dir = mkdtempSync(path.join(os.tmpdir(), "torture-history-"));
  dirs.push(dir);
  return new History(path.join(dir, "history.jsonl"));
}

describe("History", () => {
  it("writes an invoke and exactly one completion per operation, with fresh op ids; observations stay plain", () => {
    const h = history();
    const wake = h.invoke("client.wake", { slot: "TORT-1" });
    const stop = h.invoke("client.stop", { runId: "r1" });
    h.append("worker.exit", { pid: 10 });
    stop.info({ code: "P1017" });
    wake.ok({ runId: "r1", created: true });
    expect(wake.completed).toBe("ok");
    expect(() => wake.fail()).toThrow(/completed twice/);
    const events = readHistory(h.file);
    expect(events.map((e) => [e.ev, e.type, e.op])).toEqual([
      ["client.wake", "invoke", 1],
      ["client.stop", "invoke", 2],
      ["worker.exit", undefined, undefined],
      ["client.stop", "info", 2],
      ["client.wake", "ok", 1],
    ]);
    const { operations, unpaired } = readOperations(events);
    expect(unpaired).toEqual([]);
    expect(operations.map((op) => [op.f, op.outcome, op.value])).toEqual([
      ["client.wake", "ok", { slot: "TORT-1", runId: "r1", created: true }],
      ["client.stop", "info", { runId: "r1", code: "P1017" }],
    ]);
  });

  it("a field named like the pairing's cannot overwrite it", () => {
    const h = history();
    h.invoke("fault", { kind: "kill_worker", type: "ok", op: 99 }).ok({ type: "fail", op: 7 });
    expect(readHistory(h.file).map((e) => [e.type, e.op])).toEqual([
      ["invoke", 1],
      ["ok", 1],
    ]);
  });
});
