// `pnpm bench:locks`: the directory-merge lock figures alone (stage (e) of bench/copyback.ts).
// Prints figures; asserts nothing.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { benchContended, benchUncontended } from "./lib/locks-bench";
import { ms, peakRssMiB, renderTable } from "./lib/stats";

const work = await mkdtemp(path.join(os.tmpdir(), "copyback-bench-locks-"));
try {
  const un = await benchUncontended(work, 1000);
  const rows: string[][] = [
    [
      "uncontended acquire+release (1,000x)",
      `median ${ms(un.medianMs)}, p99 ${ms(un.p99Ms)}, max ${ms(un.maxMs)} (first ${ms(un.firstMs)})`,
      "< 2 ms",
      un.medianMs < 2 && un.p99Ms < 2 ? "PASS" : "MISS",
    ],
  ];
  for (const holdMs of [0, 1]) {
    const c = await benchContended(work, { processes: 4, durationMs: 5_000, holdMs });
    rows.push([
      `4 processes, one target, hold ${holdMs} ms`,
      `${c.perSecond.toFixed(0)} acq/s (${c.perProcess.join("/")}), wait p50 ${ms(c.waitP50Ms)}, p99 ${ms(c.waitP99Ms)}, max ${ms(c.waitMaxMs)}`,
      "-",
      "-",
    ]);
  }
  console.log(renderTable(["lock benchmark", "figures", "target", "result"], rows));
  console.log(
    `peak RSS ${peakRssMiB().toFixed(0)} MiB; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} on ${os.cpus().length} CPUs`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
