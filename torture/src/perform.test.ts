// How a thrown error completes an operation: fail only for the product's refusal, info for
// anything that may have taken effect; and perform's one completion either way.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { conflict, DomainError, notFound } from "@copyback/core/errors";
import { afterAll, describe, expect, it } from "vitest";
import { readOperations } from "./checker/operations";
import { History, readHistory } from "./history";
import { completionOfError, perform, signalAs } from "./perform";

const dir = mkdtempSync(path.join(os.tmpdir(), "torture-perform-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("completionOfError", () => {
  it("a refusal of the product is a fail; an unavailable answer, a database or system error an info", () => {
    expect(completionOfError(conflict("run_not_active", "ended"))).toBe("fail");
    expect(completionOfError(notFound("The run"))).toBe("fail");
    expect(completionOfError(new DomainError("unavailable", "discard_unrecorded", "destroyed, unrecorded"))).toBe("info");
    expect(completionOfError(Object.assign(new Error("Can't reach database server"), { name: "PrismaClientKnownRequestError", code: "P1001" }))).toBe("info");
    expect(completionOfError(Object.assign(new Error("terminating connection"), { code: "57P01" }))).toBe("info");
    expect(completionOfError("thrown string")).toBe("info");
  });

  it("an operation that can refuse after it acted narrows the refusals", () => {
    const admission = (code: string) => code === "copyback_pending";
    expect(completionOfError(conflict("copyback_pending", "wait"), admission)).toBe("fail");
    expect(completionOfError(conflict("discard_superseded", "destroyed by another request"), admission)).toBe("info");
  });
});

describe("perform", () => {
  it("completes ok with the answer, fail on a refusal, info on anything else, and never throws", async () => {
    const h = new History(path.join(dir, "perform.jsonl"));
    const done = await perform(h, "client.wake", { slot: "s" }, async () => ({ runId: "r1" }), { answer: (w) => ({ runId: w.runId }) });
    expect(done).toEqual({ ok: true, value: { runId: "r1" } });
    const refused = await perform(h, "client.stop", { runId: "r1" }, () => Promise.reject(conflict("run_not_active", "ended")));
    expect(refused).toMatchObject({ ok: false, completion: "fail" });
    const lost = await perform(h, "attest", { actionId: "a1" }, () => Promise.reject(new Error("Connection terminated unexpectedly")));
    expect(lost).toMatchObject({ ok: false, completion: "info" });
    const { operations, unpaired } = readOperations(readHistory(h.file));
    expect(unpaired).toEqual([]);
    expect(operations.map((op) => [op.f, op.outcome])).toEqual([
      ["client.wake", "ok"],
      ["client.stop", "fail"],
      ["attest", "info"],
    ]);
    expect(operations[1]!.value).toMatchObject({ runId: "r1", code: "run_not_active" });
    expect(operations[2]!.value).toMatchObject({ actionId: "a1", code: null, message: "Connection terminated unexpectedly" });
  });

  it("a signal the kernel refused (no such process) is a fail: nothing was sent", () => {
    const h = new History(path.join(dir, "signal.jsonl"));
    // PID 2^22 + 1 is above Linux's largest PID: no such process.
    expect(signalAs(h.invoke("fault", { kind: "kill_agent" }), 4_194_305, "SIGKILL")).toBe(false);
    expect(signalAs(h.invoke("nemesis.resume", { pid: process.pid }), process.pid, 0 as unknown as NodeJS.Signals)).toBe(true);
    expect(readOperations(readHistory(h.file)).operations.map((op) => op.outcome)).toEqual(["fail", "ok"]);
  });
});
