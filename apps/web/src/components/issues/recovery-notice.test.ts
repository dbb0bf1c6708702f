// What the task page renders of a recovery, for each layer the server sends (R-UI-1, R-UI-2,
// R-UI-5): the payloads are built by the server's own mapping (core's deriveTaskNotice and the
// router's actionDetails) from an action whose evidence records a controller's host and pid, and
// rendered to HTML.
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import {
  OWNER_UNVERIFIED_CAUSE,
  OWNER_UNVERIFIED_NEXT_ACTION,
  OWNER_UNVERIFIED_EVIDENCE_SCHEMA,
  OWNER_ATTESTATION_SCHEMA,
} from "@copyback/core/records";
import {
  toNoticeAction,
  type OpenActionRow,
  CONTINUING_MESSAGE,
  deferralMessage,
  deriveTaskNotice,
} from "@copyback/core/recovery";
import { actionDetails } from "~/server/routers/recovery/action-details";
import { RecoveryNotice } from "./recovery-notice";
import type { TaskRecovery } from "./use-task-recovery";

const COMPANY = "7d1c8f2e-3b4a-4c5d-8e6f-0a1b2c3d4e5f";
const RUN = "2f6e9a10-1111-4222-8333-944455556666";
const ISSUE = "c0ffee00-aaaa-4bbb-8ccc-dddddddddddd";
const ACTION = "0badf00d-1234-4567-89ab-cdef01234567";
const LEASE = "1ea5e000-1234-4567-89ab-cdef01234567";
const HOST = "retired-controller-9f.internal";
const PID = 48213;
const TOKEN = "tok-Zq81_cS2";

function row(attested = false): OpenActionRow {
  return {
    id: ACTION,
    companyId: COMPANY,
    issueId: ISSUE,
    runId: RUN,
    leaseId: LEASE,
    cause: OWNER_UNVERIFIED_CAUSE,
    fingerprint: `${RUN}:owner:abc`,
    ownerType: "board",
    status: "active",
    evidence: {
      schema: OWNER_UNVERIFIED_EVIDENCE_SCHEMA,
      runId: RUN,
      ownerToken: TOKEN,
      owner: { host: HOST, pid: PID, processStart: "99887766", bootId: "boot-1" },
      reason: "controller_on_other_host",
      phase: "workspace_finalizing",
      resultId: null,
      leaseIds: [LEASE],
      detectedAt: new Date().toISOString(),
      ...(attested
        ? {
            attestation: {
              schema: OWNER_ATTESTATION_SCHEMA,
              ownerToken: TOKEN,
              owner: { host: HOST, pid: PID },
              stopEvidence: "pod gone",
              actor: { type: "user", id: null },
              attestedAt: new Date().toISOString(),
            },
          }
        : {}),
    },
    nextAction: OWNER_UNVERIFIED_NEXT_ACTION,
    attemptCount: 0,
    maxAttempts: null,
    outcome: null,
    resolvedAt: null,
    resolvedByType: null,
    resolutionNote: null,
    createdAt: new Date(Date.now() - 5 * 60_000),
    updatedAt: new Date(),
  } as OpenActionRow;
}

type Layer = "member" | "runtime_manager" | "admin";

/** The payload recovery.forIssue sends each layer. */
function payload(layer: Layer, attested = false): TaskRecovery {
  const r = row(attested);
  const notice = deriveTaskNotice([toNoticeAction(r)]) as TaskRecovery["notice"];
  if (layer === "member") return { notice, details: null };
  return { notice, details: [actionDetails(r, { origin: "http://console.test", mayAttest: layer === "admin" })] };
}

const render = (recovery: TaskRecovery | null) => renderToStaticMarkup(createElement(RecoveryNotice, { companyId: COMPANY, recovery }));

/** R-UI-1: no controller identity, no control of any kind. */
function expectQuiet(html: string) {
  expect(html).not.toContain(HOST);
  expect(html).not.toMatch(new RegExp(`\\b${PID}\\b`));
  expect(html).not.toMatch(/<(button|form|input|textarea|select)\b/);
}

describe("RecoveryNotice", () => {
  it("R-UI-2: a member sees the compact operator-attention notice with Inspect run, and no Recovery details", () => {
    const html = render(payload("member"));
    expect(html).toContain("administrator needs to confirm");
    expect(html).toContain(`href="/companies/${COMPANY}/runs/${RUN}"`);
    expect(html).toContain("Inspect run");
    expect(html).not.toContain("Recovery details");
    expect(html).not.toContain(TOKEN);
    expectQuiet(html);
  });

  it("R-UI-2: a runtime manager also gets the Recovery details disclosure, without the token, API call or SQL", () => {
    const html = render(payload("runtime_manager"));
    expect(html).toMatch(/<details[^>]*><summary[^>]*>Recovery details<\/summary>/);
    expect(html).toContain("another machine");
    expect(html).toContain(LEASE);
    expect(html).not.toContain(TOKEN);
    expect(html).not.toContain("curl");
    expect(html).not.toContain("pg_advisory_xact_lock");
    expectQuiet(html);
  });

  it("R-ATT-2: an administrator's details carry the token, the API call and the SQL fallback, and still no controller identity or control", () => {
    const html = render(payload("admin"));
    expect(html).toContain(TOKEN);
    expect(html).toContain("curl -X POST");
    expect(html).toContain("pg_advisory_xact_lock");
    expectQuiet(html);
  });

  it("R-UI-1: after the attestation everyone sees only 'Restoring saved work…' (operators keep their disclosure, with no call left to make)", () => {
    const member = render(payload("member", true));
    expect(member).toContain("Restoring saved work…");
    expect(member).not.toContain("Inspect run");
    expect(member).not.toContain("Recovery details");
    expectQuiet(member);
    const admin = render(payload("admin", true));
    expect(admin).toContain("Restoring saved work…");
    expect(admin).not.toContain("curl");
    expect(admin).not.toContain(TOKEN);
    expectQuiet(admin);
  });

  it("R-RC-3: a deferred 'Continue from saved sources' reads as continuing with what it waits for; Recovery details show the code and since when", () => {
    const since = new Date(Date.now() - 2 * 3_600_000);
    const deferral = { code: "recovery_hold_open", since, lastSeenAt: new Date() };
    const r = row();
    const notice = deriveTaskNotice([toNoticeAction({ ...r, reconstruction: { status: "pending", refusalCode: null, deferral } })]) as TaskRecovery["notice"];
    const member = render({ notice, details: null });
    expect(member).toContain(CONTINUING_MESSAGE);
    expect(member).toContain(deferralMessage("recovery_hold_open"));
    expect(member).toContain("must be settled first");
    expect(member).not.toContain("recovery_hold_open");
    expect(member).not.toContain("Recovery details");
    expectQuiet(member);
    const manager = render({ notice, details: [actionDetails(r, { origin: "http://console.test", mayAttest: false, deferrals: new Map([[ACTION, deferral]]) })] });
    expect(manager).toContain("Continuing waits on");
    expect(manager).toContain("<code class=\"font-mono text-xs text-slate-500\">recovery_hold_open</code>");
    expect(manager).toContain(`dateTime="${since.toISOString()}"`);
    expectQuiet(manager);
  });

  it("R-RW-3: Recovery details show the harness's last refusal in words with its code and when it was checked; the member's notice stays quiet", () => {
    const checkedAt = new Date(Date.now() - 60_000).toISOString();
    const r = row();
    const held = { ...r, evidence: { ...(r.evidence as object), harnessCheck: { code: "deployment_live", message: `deployment dep-1 on ${HOST}: SUCCESS`, checkedAt } } } as OpenActionRow;
    const notice = deriveTaskNotice([toNoticeAction(held)]) as TaskRecovery["notice"];
    const manager = render({ notice, details: [actionDetails(held, { origin: "http://console.test", mayAttest: false })] });
    expect(manager).toContain("Automatic stop proof");
    expect(manager).toContain("Not yet: the deployment is still live");
    expect(manager).toContain("(deployment_live)");
    expect(manager).toContain(`dateTime="${checkedAt}"`);
    expect(manager).not.toContain("dep-1");
    expectQuiet(manager);
    expect(render({ notice, details: null })).not.toContain("Automatic stop proof");
    // Without a harness (no check recorded) nothing is said about it.
    expect(render(payload("runtime_manager"))).not.toContain("Automatic stop proof");
  });

  it("R-UI-5: renders nothing without a notice, or when the page could not read the recovery", () => {
    expect(render({ notice: { kind: "none" }, details: null })).toBe("");
    expect(render(null)).toBe("");
  });
});
