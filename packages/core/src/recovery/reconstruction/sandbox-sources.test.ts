import { describe, expect, it } from "vitest";
import type { ReconstructionContext } from "./authority";
import { planSources, withSourcesByUrlOnly, withSourcesPlaced } from "./sandbox-sources";

const A = "7d0c8f5e-3b1a-4c2d-9e8f-0a1b2c3d4e5f";
const B = "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b";
const context = {
  schema: "copyback.reconstruction-context.v1",
  intentId: "i",
  sourceRunId: "r",
  destroyedLeaseId: "l",
  description: "Rebuild it",
  attachments: [
    { attachmentId: A, sha256: "a".repeat(64), sizeBytes: 3, name: "notes.md", contentType: "text/markdown", contentUrl: `/api/issues/x/attachments/${A}/content` },
    { attachmentId: B, sha256: "b".repeat(64), sizeBytes: 0, name: "../odd\nname", contentType: null, contentUrl: `/api/issues/x/attachments/${B}/content` },
  ],
  externalActionOutcomes: [],
  instructions: "…",
} as unknown as ReconstructionContext;

describe("where a reconstruction's saved sources go (R-RC-5)", () => {
  it("R-RC-5 one input per selected attachment, under its id, named after its stored file name made safe", () => {
    expect(planSources(context)).toEqual([
      { attachmentId: A, relativePath: `${A}/notes.md`, sha256: "a".repeat(64), sizeBytes: 3 },
      { attachmentId: B, relativePath: `${B}/.._odd_name`, sha256: "b".repeat(64), sizeBytes: 0 },
    ]);
  });

  it("R-RC-5 once placed, each attachment gains the path the agent reads and keeps its contentUrl and hash; the context says no network is needed", () => {
    const placed = withSourcesPlaced(context, { directory: "/s/control/inputs", paths: [`/s/control/inputs/${A}/notes.md`, `/s/control/inputs/${B}/.._odd_name`], readOnly: true });
    expect(placed.attachments[0]).toMatchObject({ attachmentId: A, path: `/s/control/inputs/${A}/notes.md`, contentUrl: context.attachments[0]?.contentUrl, sha256: "a".repeat(64), sizeBytes: 3 });
    expect(placed.sources).toEqual({ delivery: "sandbox", directory: "/s/control/inputs", readOnly: true });
    expect(placed.instructions).toMatch(/Read each attachment from its path/);
    expect(placed.instructions).toMatch(/no network is needed/);
    expect(placed.instructions).toMatch(/verify its sha256 and size/);
    expect(() => withSourcesPlaced(context, { directory: "/s", paths: ["/s/one"], readOnly: true })).toThrow();
  });

  it("R-RC-5 a provider that cannot place files keeps the contentUrl delivery, and the context says so", () => {
    const byUrl = withSourcesByUrlOnly(context, "acme.remote");
    expect(byUrl.sources).toMatchObject({ delivery: "contentUrl" });
    expect(byUrl.sources.reason).toContain("acme.remote");
    expect(byUrl.attachments.every((a) => !("path" in a))).toBe(true);
    expect(byUrl.instructions).toMatch(/Fetch each attachment from its contentUrl/);
  });
});
