// The deterministic plan of one torture run, shared by the agent that performs
// it in the sandbox (agent.mjs) and the checker that simulates it (src/checker/model.ts). Every
// choice is a function of the run id and of the listing of the run's own directory, so the
// checker can replay the exact bytes each committed run must have left on the host.
//
// A run works in `t/<issue>/` of its host workspace: it creates, overwrites, deletes and renames
// files, makes relative symlinks to `anchor.txt` (never changed after the first run, so a link
// never dangles), sometimes writes a large file; behaviours: normal (result file), no_result
// (exits without a result), hang (sleeps past its time limit), unsafe (an absolute symlink, which
// the export rejects and the salvage export leaves out). Every byte names its run: each file
// starts with `copyback-torture token=<runId> path=<path>`.
import { createHash } from "node:crypto";

export const TOKEN_PREFIX = "copyback-torture token=";

function rng(seed) {
  let counter = 0;
  let pool = [];
  return () => {
    if (pool.length === 0) {
      const digest = createHash("sha256").update(`${seed}:${counter++}`).digest();
      for (let i = 0; i + 4 <= digest.length; i += 4) pool.push(digest.readUInt32BE(i) / 2 ** 32);
    }
    return pool.shift();
  };
}

/** The bytes of a file written by run `runId` at workspace path `path` (size 0: the header only). */
export function fileContent(runId, path, size = 0) {
  const header = `${TOKEN_PREFIX}${runId} path=${path}\n`;
  if (size <= header.length) return Buffer.from(header);
  const block = Buffer.from(createHash("sha256").update(`${runId}:${path}`).digest("hex") + "\n");
  const out = Buffer.alloc(size);
  out.write(header);
  for (let at = header.length; at < size; at += block.length) block.copy(out, at, 0, Math.min(block.length, size - at));
  return out;
}

/** The run's behaviour: what it does besides its file work. */
export function behaviourOf(runId) {
  const r = rng(`behaviour:${runId}`)();
  if (r < 0.07) return "no_result";
  if (r < 0.1) return "hang";
  if (r < 0.16) return "unsafe";
  return "normal";
}

/**
 * The operations of run `runId` over `listing` (the sorted names in its directory, each
 * { name, kind: "file" | "symlink" }). Each op: { op: "write", name, size } | { op: "delete", name }
 * | { op: "rename", from, to } | { op: "symlink", name, target }.
 */
export function planOps(runId, listing) {
  const next = rng(`ops:${runId}`);
  const short = runId.slice(0, 8);
  const ops = [];
  const names = new Map(listing.map((e) => [e.name, e.kind]));
  if (!names.has("anchor.txt")) {
    ops.push({ op: "write", name: "anchor.txt", size: 0 });
    names.set("anchor.txt", "file");
  }
  const pick = (kinds) => {
    const candidates = [...names.entries()].filter(([n, k]) => n !== "anchor.txt" && kinds.includes(k)).map(([n]) => n).sort();
    return candidates.length === 0 ? null : candidates[Math.floor(next() * candidates.length)];
  };
  const count = 1 + Math.floor(next() * 4);
  for (let i = 0; i < count; i++) {
    const r = next();
    if (r < 0.35 || names.size < 3) {
      const name = `f-${short}-${i}.txt`;
      const size = next() < 0.3 ? Math.floor(next() * 64 * 1024) : 0;
      ops.push({ op: "write", name, size });
      names.set(name, "file");
    } else if (r < 0.55) {
      const name = pick(["file"]);
      if (name) ops.push({ op: "write", name, size: Math.floor(next() * 8 * 1024) });
    } else if (r < 0.7) {
      const name = pick(["file", "symlink"]);
      if (name) {
        ops.push({ op: "delete", name });
        names.delete(name);
      }
    } else if (r < 0.85) {
      const from = pick(["file"]);
      if (from) {
        const to = `r-${short}-${i}.txt`;
        ops.push({ op: "rename", from, to });
        names.delete(from);
        names.set(to, "file");
      }
    } else {
      const name = `l-${short}-${i}.lnk`;
      ops.push({ op: "symlink", name, target: "anchor.txt" });
      names.set(name, "symlink");
    }
  }
  if (next() < 0.08) {
    const name = `big-${short}.bin`;
    ops.push({ op: "write", name, size: (1 + Math.floor(next() * 4)) * 1024 * 1024 });
  }
  return ops;
}

/** The absolute link an `unsafe` run adds after its ops (rejected by the export, left out by salvage). */
export function unsafeLinkOf(runId) {
  return { name: `u-${runId.slice(0, 8)}.lnk`, target: "/etc/passwd" };
}

export const RESULT_DOCUMENT = (runId) => JSON.stringify({ schema: "copyback.run-result.v1", outcome: "in_review", summary: `torture run ${runId}` });
