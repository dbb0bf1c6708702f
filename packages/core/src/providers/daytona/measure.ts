// Capability `measureSandbox`: how much a Daytona sandbox holds, counted in the sandbox by one
// `find` over copyback's directory (links never followed, a hard-linked file's bytes once), its
// workspace apart. Bounded as asked: `timeout` stops the walk at the time budget and `head` at the
// entry budget, and either cut (or a directory find could not read) makes it a lower bound.
import type { LeaseHandle, MeasureRequest, SandboxMeasurement } from "../types";
import { runScript } from "./commands";
import { LAYOUT, shellQuote } from "./layout";
import type { DaytonaSandboxes } from "./sandboxes";

/** Shell: prints "<workspace bytes> <workspace entries> <total bytes> <total entries> <cut>". */
export function measureScript(entries: number, seconds: number): string {
  const awk = [
    "/^__rc [0-9]+$/ { rc = $2; next }",
    "/^[a-zA-Z] [0-9]+ [0-9]+ [0-9]+ / {",
    `  if (n >= ${entries}) { cut = "entry_budget"; next }`,
    "  n++; path = substr($0, length($1 $2 $3 $4) + 5)",
    "  ws = index(path, \"workspace/\") == 1",
    "  bytes = ($1 == \"f\" && !($4 > 1 && seen[$3]++)) ? $2 : 0",
    "  tb += bytes; te++; if (ws) { wb += bytes; we++ }",
    "}",
    'END { if (cut == "") { if (rc == 124) cut = "time_budget"; else if (rc != 0) cut = "unreadable" }',
    '  printf "%d %d %d %d %s\\n", wb, we, tb, te, (cut == "" ? "none" : cut) }',
  ].join("\n");
  return [
    `{ timeout ${seconds} find ${shellQuote(LAYOUT.root)} -mindepth 1 -printf '%y %s %i %n %P\\n' 2>/dev/null; echo "__rc $?"; }`,
    `| head -n ${entries + 2} | awk ${shellQuote(awk)}`,
  ].join(" ");
}

export async function measureSandbox(sandboxes: DaytonaSandboxes, lease: LeaseHandle, request: MeasureRequest): Promise<SandboxMeasurement> {
  const { client, sandbox } = await sandboxes.open(lease, request.signal);
  const seconds = Math.max(1, Math.ceil(request.budget.timeMs / 1000));
  const entries = Math.max(0, Math.floor(request.budget.entries));
  const answer = await runScript(client, sandbox, measureScript(entries, seconds), { what: "measuring the sandbox", timeoutSec: seconds + 30, signal: request.signal });
  const match = /(\d+) (\d+) (\d+) (\d+) (none|entry_budget|time_budget|unreadable)\s*$/.exec(answer.output);
  if (!match) return { workspace: { bytes: 0, entries: 0 }, sandbox: null, lowerBound: "unreadable" };
  const [wb, we, tb, te] = match.slice(1, 5).map(Number) as [number, number, number, number];
  const cut = match[5] === "none" ? null : (match[5] as SandboxMeasurement["lowerBound"]);
  return { workspace: { bytes: wb, entries: we }, sandbox: { bytes: tb, entries: te }, lowerBound: cut };
}
