#!/usr/bin/env node
/* eslint-disable no-restricted-properties -- the agent is its own program, not a Copyback process */
// The torture agent: argv[2] is its directory in the workspace (t/<issue>).
// It performs plan.mjs's operations for COPYBACK_RUN_ID in the sandbox, then behaves as planned:
// writes its result file, exits without one, hangs, or leaves an unsafe link.
import { lstatSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RESULT_DOCUMENT, behaviourOf, fileContent, planOps, unsafeLinkOf } from "./plan.mjs";

const runId = process.env.COPYBACK_RUN_ID;
const dir = process.argv[2];
if (!runId || !dir) {
  process.stderr.write("torture agent: COPYBACK_RUN_ID and a directory are required\n");
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
const listing = readdirSync(dir)
  .sort()
  .map((name) => {
    const st = lstatSync(join(dir, name));
    return { name, kind: st.isSymbolicLink() ? "symlink" : st.isFile() ? "file" : "other" };
  })
  .filter((e) => e.kind !== "other");
const behaviour = behaviourOf(runId);
for (const op of planOps(runId, listing)) {
  if (op.op === "write") writeFileSync(join(dir, op.name), fileContent(runId, `${dir}/${op.name}`, op.size));
  else if (op.op === "delete") rmSync(join(dir, op.name), { force: true });
  else if (op.op === "rename") renameSync(join(dir, op.from), join(dir, op.to));
  else if (op.op === "symlink") symlinkSync(op.target, join(dir, op.name));
}
process.stdout.write(`torture agent ${runId}: ${behaviour}\n`);
if (behaviour === "unsafe") {
  const link = unsafeLinkOf(runId);
  symlinkSync(link.target, join(dir, link.name));
}
if (behaviour === "no_result") process.exit(0);
if (behaviour === "hang") {
  setInterval(() => undefined, 1_000_000);
} else {
  writeFileSync(process.env.COPYBACK_RESULT_FILE, RESULT_DOCUMENT(runId));
}
