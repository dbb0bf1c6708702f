// What the task's recovery notice renders of "Continue from saved sources" (R-UI-3, R-RC-1,
// R-RC-3), to HTML: the offer's button for a board operator, nothing without Recovery details or
// without an offer, the recorded intent's calm state instead of any form, and the opened form's
// fields. The form renders inside the real tRPC and TanStack Query providers (a client whose link is
// never called: rendering sends nothing) and an App Router context (nothing navigates).
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { AppRouterContext, type AppRouterInstance } from "next/dist/shared/lib/app-router-context.shared-runtime";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import superjson from "superjson";
import { describe, expect, it } from "vitest";
import type { AppRouter } from "~/server/routers/_app";
import { TRPCProvider } from "~/trpc/react";
import { ReconstructionForm, type ReconstructionIntent, type ReconstructionOffer } from "./reconstruction-form";
import { RecoveryNotice } from "./recovery-notice";
import type { TaskRecovery } from "./use-task-recovery";

const COMPANY = "7d1c8f2e-3b4a-4c5d-8e6f-0a1b2c3d4e5f";
const ISSUE = "c0ffee00-aaaa-4bbb-8ccc-dddddddddddd";
const RUN = "2f6e9a10-1111-4222-8333-944455556666";
const ACTION = "0badf00d-1234-4567-89ab-cdef01234567";
const LEASE = "1ea5e000-1234-4567-89ab-cdef01234567";
const ATTACHMENT = "a77ac000-1234-4567-89ab-cdef01234567";
const SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

const offer = (pendingIntent: ReconstructionIntent | null = null): ReconstructionOffer => ({
  actionId: ACTION,
  sourceRunId: RUN,
  leaseId: LEASE,
  statusVersion: 5,
  destroyedAt: "2026-12-01T20:00:00.000Z",
  attachments: [{ id: ATTACHMENT, name: "design-notes.md", sizeBytes: 4200, sha256: SHA, createdAt: "2026-12-01T19:00:00.000Z" }],
  pendingIntent,
});

const intent = (status: ReconstructionIntent["status"]): ReconstructionIntent => ({
  id: "1a7e0000-1234-4567-89ab-cdef01234567",
  status,
  actionId: ACTION,
  sourceRunId: RUN,
  leaseId: LEASE,
  requestId: "req-7",
  attachmentHashes: [{ attachmentId: ATTACHMENT, sha256: SHA, sizeBytes: 4200 }],
  deliveredRunId: null,
  createdAt: "2026-12-01T20:05:00.000Z",
  deferral: null,
});

/** The attention notice of a discarded export hold, as recovery.forIssue sends it to each layer. */
function recovery(layer: "member" | "operator"): TaskRecovery {
  const notice = { kind: "attention", runId: RUN, actionId: ACTION, cause: "native_workspace_sync_out_retry_exhausted", message: "The sandbox was discarded." } as const;
  return { notice, details: layer === "member" ? null : [] };
}

const renderNotice = (layer: "member" | "operator", reconstruction: ReconstructionOffer | null) =>
  renderToStaticMarkup(createElement(RecoveryNotice, { companyId: COMPANY, issueId: ISSUE, recovery: recovery(layer), reconstruction }));

function renderForm(): string {
  const queryClient = new QueryClient();
  const trpcClient = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: "http://127.0.0.1:9/api/trpc", transformer: superjson })] });
  const form = createElement(ReconstructionForm, { companyId: COMPANY, issueId: ISSUE, offer: offer(), onRecorded: () => undefined, onCancel: () => undefined });
  const router = { refresh: () => undefined } as unknown as AppRouterInstance;
  const tree = createElement(TRPCProvider, { trpcClient, queryClient, children: createElement(AppRouterContext.Provider, { value: router }, form) });
  return renderToStaticMarkup(createElement(QueryClientProvider, { client: queryClient }, tree));
}

describe("Continue from saved sources in the recovery notice", () => {
  it("R-UI-3 R-RC-1 a board operator with the offer sees the button in the notice, outside Recovery details", () => {
    const html = renderNotice("operator", offer());
    expect(html).toContain('data-testid="reconstruction-offer"');
    expect(html).toMatch(/<button[^>]*data-testid="reconstruction-open"[^>]*>Continue from saved sources<\/button>/);
    expect(html.indexOf("reconstruction-offer")).toBeLessThan(html.indexOf("recovery-details"));
  });

  it("R-UI-3 R-UI-5 without Recovery details (no runtime:manage) or without an offer (no confirmed destruction) nothing of it shows", () => {
    // Even if an offer reached the component, a viewer without details gets the read-only notice.
    for (const html of [renderNotice("member", offer()), renderNotice("operator", null)]) {
      expect(html).toContain('data-testid="recovery-notice"');
      expect(html).not.toContain("reconstruction");
      expect(html).not.toContain("Continue from saved sources");
    }
    expect(renderNotice("member", offer())).not.toMatch(/<(button|form|input|textarea|select)\b/);
  });

  it("R-RC-3 a recorded intent shows its calm state instead of the form, never a second form", () => {
    const pending = renderNotice("operator", offer(intent("pending")));
    expect(pending).toContain("Continuing from saved sources: a fresh session will start.");
    expect(pending).toContain('data-status="pending"');
    expect(pending).toContain("1 saved attachment");
    expect(pending).not.toContain("reconstruction-open");
    expect(pending).not.toContain("reconstruction-form");
    expect(pending).not.toMatch(/<(form|input|textarea|select)\b/);
    const delivered = renderNotice("operator", offer(intent("delivered")));
    expect(delivered).toContain("a fresh session has started.");
    expect(delivered).not.toContain("reconstruction-form");
  });

  it("R-UI-3 R-RC-2 the opened form: the statement, each attachment by name, size and short hash, the description and the external actions", () => {
    const html = renderForm();
    expect(html).toContain('data-testid="reconstruction-form"');
    expect(html).toContain("This is reconstruction, not recovery of the missing edits");
    expect(html).toMatch(new RegExp(`<input type="checkbox"[^>]*data-testid="reconstruction-attachment"[^>]*value="${ATTACHMENT}"`));
    expect(html).toContain(`design-notes.md · 4.2 KB · sha256 ${SHA.slice(0, 12)}`);
    expect(html).not.toContain(SHA);
    expect(html).toMatch(/<textarea[^>]*required=""[^>]*data-testid="reconstruction-description"/);
    expect(html).toContain('data-testid="reconstruction-outcome-add"');
    // No outcome row until the operator adds one: nothing is recorded on their behalf.
    expect(html).not.toContain('data-testid="reconstruction-outcome"');
    expect(html).not.toContain('data-testid="reconstruction-error"');
  });
});
