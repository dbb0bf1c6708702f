// What the Environments page renders, from the server's own mapping (core's environmentsView):
// a daytona environment's settings and its key variable's state by NAME, a local one's settings,
// an invalid config's zod message, and never a key's value.
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { environmentsView } from "@copyback/core/providers";
import { EnvironmentList } from "./environment-list";

const SECRET = "dtn_render_secret_42";
const COMPANY = "00000000-0000-4000-8000-0000000000c0";
const RUN = "00000000-0000-4000-8000-0000000000r1".replace("r", "a");
const withoutRecords = (views: ReturnType<typeof environmentsView>) => views.map((v) => ({ ...v, lastCredentialRefusal: null, sandbox: null }));

describe("EnvironmentList", () => {
  it("renders the daytona settings, 'not set: set DAYTONA_... in the worker's environment', the invalid message, and no key", () => {
    const items = withoutRecords(environmentsView(
      [
        { id: "00000000-0000-4000-8000-000000000001", name: "daytona-eu", provider: "daytona", pluginId: "builtin.daytona", defaultLeasePolicy: "ephemeral", config: { apiKeyEnv: "DAYTONA_EU_KEY", target: "eu", image: "node:22", resources: { cpu: 2 }, autoStopMinutes: 0 } },
        { id: "00000000-0000-4000-8000-000000000002", name: "daytona-us", provider: "daytona", pluginId: "builtin.daytona", defaultLeasePolicy: "ephemeral", config: {} },
        { id: "00000000-0000-4000-8000-000000000003", name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment", config: { allowNetwork: true } },
        { id: "00000000-0000-4000-8000-000000000004", name: "broken", provider: "daytona", pluginId: "builtin.daytona", defaultLeasePolicy: "ephemeral", config: { apiUrl: "ftp://x" } },
        { id: "00000000-0000-4000-8000-000000000005", name: "pasted", provider: "daytona", pluginId: "builtin.daytona", defaultLeasePolicy: "ephemeral", config: { apiKey: SECRET } },
      ],
      (name) => (name === "DAYTONA_API_KEY" ? SECRET : undefined),
    ));
    const html = renderToStaticMarkup(createElement(EnvironmentList, { items, companyId: COMPANY }));
    expect(html).toContain("Key variable DAYTONA_EU_KEY: not set: set DAYTONA_EU_KEY in the worker&#x27;s environment");
    expect(html).toContain("Key variable DAYTONA_API_KEY: set");
    expect(html).toContain("image node:22");
    expect(html).toContain("2 CPU");
    expect(html).toContain("0 (never stopped for idleness)");
    expect(html).toContain("allowNetwork");
    expect(html).toContain("invalid configuration: apiUrl: must be an https URL (http only on a loopback host)");
    expect(html).toContain("not shown: it holds a key-like field (apiKey)");
    expect(html).not.toContain(SECRET);
  });

  it("issue 21: renders the last refused dispatch (code, message, a link to the run) and the newest sandbox's Daytona id with the dashboard link", () => {
    const [view] = environmentsView([{ id: "00000000-0000-4000-8000-000000000001", name: "dt", provider: "daytona", pluginId: "builtin.daytona", defaultLeasePolicy: "ephemeral", config: {} }], () => undefined);
    const item = {
      ...view!,
      lastCredentialRefusal: { runId: RUN, code: "provider_credentials_rejected", variable: "DAYTONA_API_KEY", message: "Daytona rejected the API key in the environment variable DAYTONA_API_KEY (HTTP 401)", at: new Date("2026-12-07T09:00:00Z") },
      sandbox: { leaseId: "00000000-0000-4000-8000-000000000009", status: "released", sandboxId: "sbx-42", dashboardUrl: "https://app.daytona.io/dashboard/sandboxes", acquiredAt: new Date(), live: { kind: "read" as const, state: "stopped", providerState: "archived", autoDelete: "disabled", autoDeleteMinutes: null } },
    };
    const html = renderToStaticMarkup(createElement(EnvironmentList, { items: [item], companyId: COMPANY }));
    expect(html).toContain("No run is dispatched while the key is missing or rejected");
    expect(html).toContain("provider_credentials_rejected");
    expect(html).toContain(`href="/companies/${COMPANY}/runs/${RUN}"`);
    expect(html).toContain("Daytona id <span class=\"font-mono\">sbx-42</span>, released");
    expect(html).toContain(`href="https://app.daytona.io/dashboard/sandboxes"`);
    expect(html).toContain("Daytona says: archived, auto-delete disabled");
    const bare = renderToStaticMarkup(createElement(EnvironmentList, { items: [{ ...item, lastCredentialRefusal: null, sandbox: { ...item.sandbox, dashboardUrl: null, live: { kind: "not_read" as const, code: "provider_credentials_rejected", message: "rejected" } } }], companyId: COMPANY }));
    expect(bare).not.toContain("No run is dispatched");
    expect(bare).toContain("sbx-42");
    expect(bare).not.toContain("dashboard");
    expect(bare).toContain("Daytona not read (provider_credentials_rejected)");
  });
});
