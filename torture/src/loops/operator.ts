// The harness's operator (operator.ts) and the disk sampler, every few seconds while the suite runs.
import { createDefaultRegistry } from "@copyback/core/providers";
import { operatorPass, sampleDisk } from "../operator";
import { errorFields } from "../perform";
import { COMPANY_ID } from "../world";
import { sleep, type Harness } from "./harness";

export async function operatorLoop(h: Harness): Promise<void> {
  const { prisma, history, state, home } = h;
  // One operator per host (two-host mode: each host's console discards its own host's sandboxes).
  const consoles = h.hosts.map((host) => ({ host, registry: createDefaultRegistry({ instanceRoot: host.home }) }));
  let lastSample = 0;
  while (!state.stopping) {
    await sleep(3_000);
    if (Date.now() - lastSample >= 10_000) {
      lastSample = Date.now();
      sampleDisk(history, home);
    }
    if (state.pgDown || !state.chaos) continue;
    try {
      // A host killed whole has no console either.
      for (const { host, registry } of consoles) if (!h.deadHosts.has(host.index)) await operatorPass(prisma, { companyId: COMPANY_ID, instanceRoot: host.home, history, minAgeMs: 20_000, hostId: host.id }, registry);
    } catch (error) {
      history.append("operator.error", { message: errorFields(error, 200).message });
    }
  }
}
