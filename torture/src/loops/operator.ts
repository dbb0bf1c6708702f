// The harness's operator (operator.ts) and the disk sampler, every few seconds while the suite runs.
import { createDefaultRegistry } from "@copyback/core/providers";
import { operatorPass, sampleDisk } from "../operator";
import { errorFields } from "../perform";
import { COMPANY_ID } from "../world";
import { sleep, type Harness } from "./harness";

export async function operatorLoop(h: Harness): Promise<void> {
  const { prisma, history, state, home } = h;
  const registry = createDefaultRegistry({ instanceRoot: home });
  let lastSample = 0;
  while (!state.stopping) {
    await sleep(3_000);
    if (Date.now() - lastSample >= 10_000) {
      lastSample = Date.now();
      sampleDisk(history, home);
    }
    if (state.pgDown || !state.chaos) continue;
    try {
      await operatorPass(prisma, { companyId: COMPANY_ID, instanceRoot: home, history, minAgeMs: 20_000 }, registry);
    } catch (error) {
      history.append("operator.error", { message: errorFields(error, 200).message });
    }
  }
}
