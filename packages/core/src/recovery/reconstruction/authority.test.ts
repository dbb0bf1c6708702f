// The delivery's run event (authority.ts reconstructionEventPayload), pure: it quotes the decision
// and leaves the bulk with the intent.
import { describe, expect, it } from "vitest";
import type { ReconstructionIntent } from "@copyback/db/client";
import { reconstructionContext, reconstructionEventPayload } from "./authority";
import { contextDocument } from "./context-delivery";
import { outcomesDocument } from "./intent-document";

const ID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

function largestIntent(): ReconstructionIntent {
  const attachments = Array.from({ length: 500 }, (_, i) => ({ attachmentId: ID(i + 1), sha256: "a".repeat(64), sizeBytes: 10 + i }));
  const observed = Array.from({ length: 200 }, (_, i) => ({ action: `action ${i} `.padEnd(2_000, "x"), outcome: "performed" as const, evidence: "e".repeat(20_000) }));
  return {
    id: ID(9001),
    companyId: ID(9002),
    issueId: ID(9003),
    recoveryActionId: ID(9004),
    sourceRunId: ID(9005),
    leaseId: ID(9006),
    description: "d".repeat(20_000),
    attachmentHashes: attachments,
    externalActionOutcomes: outcomesDocument(observed, { resultId: "r", descriptorLeaseId: "l", destructionRequestId: "d", retryBudget: 3, laterCancellations: [] }),
  } as unknown as ReconstructionIntent;
}

describe("the reconstruction delivery's run event", () => {
  it("R-RC-5 the largest decision's event quotes it in a few dozen KiB: every attachment named, evidence left out, the full context's digest kept", () => {
    const intent = largestIntent();
    const context = reconstructionContext(intent, new Map());
    const payload = reconstructionEventPayload(context);
    const full = JSON.stringify(context).length;
    const event = JSON.stringify(payload).length;
    expect(full).toBeGreaterThan(4_000_000);
    expect(event).toBeLessThan(256 * 1024);
    expect(payload.attachments).toHaveLength(context.attachments.length);
    expect(payload.externalActionOutcomes).toHaveLength(context.externalActionOutcomes.length);
    expect(JSON.stringify(payload)).not.toContain("evidence");
    expect(payload.description).toHaveLength(501);
    expect(payload.descriptionChars).toBe(20_000);
    expect(payload.contextSha256).toBe(contextDocument(context).sha256);
  });

  it("R-RC-5 a short decision is quoted whole", () => {
    const intent = { ...largestIntent(), description: "Rebuild the README" } as ReconstructionIntent;
    const payload = reconstructionEventPayload(reconstructionContext(intent, new Map()));
    expect(payload.description).toBe("Rebuild the README");
  });
});
