// Issue 23 (host affinity): what the task page's agent panel renders for a run bound to a host
// that is not there (a queued run waiting for it, a running run whose worker stopped), from the
// server's own value (core's hostWaitOf), rendered to HTML.
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { hostWaitOf, type HostBeats } from "@copyback/core/deployment";
import { HOST_WAIT_REREAD_MS, HostWaitNote, hostWaitRereadMs } from "./host-wait-note";

const now = new Date("2026-12-07T12:00:00.000Z");
const none = new Map<string, HostBeats>();
const render = (waiting: Parameters<typeof HostWaitNote>[0]["waiting"]) => renderToStaticMarkup(createElement(HostWaitNote, { waiting }));

describe("the host wait note (issue 23)", () => {
  it("host affinity: a run bound to a host without a live worker reads 'Waiting for the worker on HOST', quietly, as a status", () => {
    const html = render(hostWaitOf({ status: "queued", boundHost: "build-02" }, none, now));
    expect(html).toContain("Waiting for the worker on build-02.");
    expect(html).toContain("the run starts there by itself once a worker of that host is running again.");
    expect(html).toContain('role="status"');
    expect(html).toContain('data-code="waiting_for_host"');
    // Calm: no warning colours, no control to press.
    expect(html).not.toMatch(/amber|red-|<button|<form/);
  });

  it("host affinity: a running run whose host has no live worker reads 'The worker on HOST stopped during this run', as calmly, with where its work is", () => {
    const html = render(hostWaitOf({ status: "running", boundHost: "build-02" }, none, now));
    expect(html).toContain("The worker on build-02 stopped during this run.");
    expect(html).toContain("Its work is kept on that host; recovery picks it up there once a worker of that host is running again.");
    expect(html).not.toContain("the run starts there by itself");
    expect(html).toContain('role="status"');
    expect(html).toContain('data-code="host_worker_gone"');
    expect(html).not.toMatch(/amber|red-|<button|<form/);
  });

  it("host affinity: a run of a live host (or an unbound workspace), or a draining host's running run, shows nothing", () => {
    const live = new Map<string, HostBeats>([["build-02", { seenAt: now, servingSeenAt: now }]]);
    const draining = new Map<string, HostBeats>([["build-02", { seenAt: now, servingSeenAt: null }]]);
    expect(render(hostWaitOf({ status: "queued", boundHost: "build-02" }, live, now))).toBe("");
    expect(render(hostWaitOf({ status: "running", boundHost: "build-02" }, live, now))).toBe("");
    expect(render(hostWaitOf({ status: "running", boundHost: "build-02" }, draining, now))).toBe("");
    expect(render(hostWaitOf({ status: "queued", boundHost: null }, none, now))).toBe("");
  });

  it("host affinity: the task page re-reads a queued or running run (a host going away changes no run row), never a settled one", () => {
    expect(hostWaitRereadMs("queued")).toBe(HOST_WAIT_REREAD_MS);
    expect(hostWaitRereadMs("running")).toBe(HOST_WAIT_REREAD_MS);
    for (const status of ["succeeded", "failed", "cancelled", "timed_out", undefined]) expect(hostWaitRereadMs(status)).toBe(false);
  });
});
