// Issue 23 (host affinity): what the task page's agent panel renders for a queued run that waits
// for its workspace's host, from the server's own value (core's hostWaitOf), rendered to HTML.
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { hostWaitOf } from "@copyback/core/deployment";
import { HostWaitNote } from "./host-wait-note";

const now = new Date("2026-12-07T12:00:00.000Z");

describe("the host wait note (issue 23)", () => {
  it("host affinity: a run bound to a host without a live worker reads 'Waiting for the worker on HOST', quietly, as a status", () => {
    const html = renderToStaticMarkup(createElement(HostWaitNote, { waiting: hostWaitOf("build-02", new Map(), now) }));
    expect(html).toContain("Waiting for the worker on build-02.");
    expect(html).toContain('role="status"');
    expect(html).toContain('data-code="waiting_for_host"');
    // Calm: no warning colours, no control to press.
    expect(html).not.toMatch(/amber|red-|<button|<form/);
  });

  it("host affinity: a run of a live host (or an unbound workspace) shows nothing", () => {
    const live = hostWaitOf("build-02", new Map([["build-02", now]]), now);
    expect(renderToStaticMarkup(createElement(HostWaitNote, { waiting: live }))).toBe("");
    expect(renderToStaticMarkup(createElement(HostWaitNote, { waiting: hostWaitOf(null, new Map(), now) }))).toBe("");
  });
});
