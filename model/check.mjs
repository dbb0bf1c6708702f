#!/usr/bin/env node
// Runs the ownership model (model/ownership.qnt) with Quint's random simulator and judges it:
//   1. `ownership` (the product's rules): every invariant holds over the sampled traces;
//   2. `ownershipManyFaults` (the same with three times the faults per trace): the same;
//   3. `ownershipWeakHold` (the held-lease rule as before e934c8d): heldSandboxNeverReused MUST be
//      violated: a model that no longer catches the reused-lease defect checks nothing.
// and the fixed scenario of that defect (`quint test`): the product's rule refuses the reuse
// (heldLeaseRefusedTest), the weakened one takes it (heldLeaseTakenTest).
// Any other answer fails (exit 1), and so does a Quint that cannot parse or run the model.
//
//   node model/check.mjs           the bounded check (static tier of scripts/run-tests.ts: fixed
//                                  seeds, so the same traces every time; about a minute)
//   node model/check.mjs --long    pnpm model:long: random seeds (printed for replay), many samples
//   options: --samples N --steps N --seed S (S for every run; default fixed, random with --long)
//
// Quint runs on Node with `--backend=typescript`: the default rust backend downloads an evaluator
// binary at first use, which this machine (and CI) cannot reach (ENVIRONMENT.md, Quint).
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const quint = path.join(root, "node_modules/.bin/quint");
const spec = path.join(here, "ownership.qnt");

const INVARIANTS = ["neverTwoPublishing", "committedNeverChanges", "attestationNeverReleasesNewerOwner", "heldSandboxNeverReused", "noAcceptedResultDropped"];
const WITNESSES = ["witnessStoppedSandboxWhileResultWaits", "witnessReuse", "witnessCommitted", "witnessUnverifiedHold", "witnessAttested", "witnessHarnessProof", "witnessOrphanChildren"];
// The state is long; a trace printed on a violation shows the actions taken (`taken`) only.
const HIDDEN = ["runs", "ctrls", "leases", "holds", "hostUp", "orphans", "nextToken", "ghost"];

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = process.argv[i + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`--${name} needs a value`);
  return value;
}

function positive(name, fallback) {
  const value = Number(option(name, String(fallback)));
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer`);
  return value;
}

const long = process.argv.includes("--long");
const samples = positive("samples", long ? 5000 : 250);
const steps = positive("steps", long ? 60 : 40);
const randomSeed = () => String(Math.floor(Math.random() * 2 ** 31));
const seedOption = option("seed", null);
const seedFor = (fixed) => seedOption ?? (long ? randomSeed() : fixed);

/** Runs quint; its output is drained into memory (and returned), never left to block the child. */
function runQuint(args, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(quint, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ code: null, output: `${output}\n${error.message}` });
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, output });
    });
  });
}

const tail = (text, lines) => text.trimEnd().split("\n").slice(-lines).join("\n");
const witnessLines = (text) => text.split("\n").filter((line) => / was witnessed in /.test(line));

/** One run of the simulator; returns whether it answered as expected and what to print. */
async function check({ name, main, invariants, witnesses, samples: n, seed, expect }) {
  const args = ["run", spec, "--backend=typescript", `--main=${main}`, `--max-samples=${n}`, `--max-steps=${steps}`, `--seed=${seed}`, "--invariants", ...invariants];
  if (witnesses.length) args.push("--witnesses", ...witnesses);
  args.push("--hide", ...HIDDEN);
  let report = `\n[model] ${name}\n  quint ${args.map((a) => (a === spec ? "model/ownership.qnt" : a)).join(" ")}\n`;
  const started = Date.now();
  const { code, output } = await runQuint(args, long ? 4 * 3600_000 : 600_000);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const violated = /\[violation\]/.test(output);
  const clean = code === 0 && /\[ok\] No violation found/.test(output);
  const ok = expect === "hold" ? clean : code !== 0 && violated;
  for (const line of witnessLines(output)) report += `  ${line.trim()}\n`;
  if (expect === "violation" && violated) {
    const actions = [...output.matchAll(/name: "([A-Za-z]+)"/g)].map((m) => m[1]).filter((a) => a !== "init");
    report += `  counterexample, ${actions.length} steps: ${actions.join(" -> ")}\n`;
  }
  const said = expect === "hold" ? (clean ? "every invariant held" : violated ? "an invariant was VIOLATED" : "quint failed") : violated ? "the weakened rule was caught" : "the weakened rule was NOT caught";
  report += `  ${ok ? "ok" : "FAILED"}: ${said} (seed ${seed}, ${seconds} s)\n`;
  if (!ok) report += `${tail(output, expect === "hold" && violated ? 400 : 40)}\n`;
  return { ok, report };
}

/** `quint test` of one module's scenario runs (their only nondeterminism: a receipt clear that may fail). */
async function scenario({ name, main, test, seed }) {
  const args = ["test", spec, "--backend=typescript", `--main=${main}`, `--match=${test}`, "--max-samples=20", `--seed=${seed}`];
  let report = `\n[model] ${name}\n  quint ${args.map((a) => (a === spec ? "model/ownership.qnt" : a)).join(" ")}\n`;
  const started = Date.now();
  const { code, output } = await runQuint(args, 600_000);
  const ok = code === 0 && new RegExp(`ok ${test} passed`).test(output);
  report += `  ${ok ? "ok" : "FAILED"}: ${test} ${ok ? "passed" : "did not pass"} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`;
  if (!ok) report += `${tail(output, 40)}\n`;
  return { ok, report };
}

if (!fs.existsSync(quint)) {
  process.stdout.write(`[model] ${quint} is missing: install the root devDependencies (pnpm install)\n1 failed\n`);
  process.exit(1);
}

// Side by side (the simulator is single-threaded; CI has two cores), printed in this order.
const results = await Promise.all([
  check({ name: "the product's rules hold", main: "ownership", invariants: INVARIANTS, witnesses: WITNESSES, samples, seed: seedFor("20261207"), expect: "hold" }),
  check({ name: "the product's rules hold with many faults", main: "ownershipManyFaults", invariants: INVARIANTS, witnesses: WITNESSES, samples: Math.max(1, Math.round(samples * 0.6)), seed: seedFor("20261208"), expect: "hold" }),
  check({ name: "the weakened hold rule (before e934c8d) is caught", main: "ownershipWeakHold", invariants: ["heldSandboxNeverReused"], witnesses: [], samples, seed: seedFor("20261209"), expect: "violation" }),
  scenario({ name: "the defect's scenario on the product's rule: the waiting sandbox is refused", main: "ownership", test: "heldLeaseRefusedTest", seed: seedFor("1") }),
  scenario({ name: "the defect's scenario on the weakened rule: the waiting sandbox is reused", main: "ownershipWeakHold", test: "heldLeaseTakenTest", seed: seedFor("1") }),
]);
for (const result of results) process.stdout.write(result.report);
const passed = results.filter((result) => result.ok).length;
process.stdout.write(`\nmodel: ${passed} passed, ${results.length - passed} failed\n`);
process.exitCode = passed === results.length ? 0 : 1;
