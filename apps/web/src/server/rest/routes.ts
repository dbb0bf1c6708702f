// Every REST operator route, in one table: the route.ts files under src/app/api export these
// handlers, and the authorization matrix iterates this list (a route missing here is a route the
// matrix cannot test; test/rest-routes.integration-test.ts checks both directions).
import type { Permission } from "@copyback/core/auth";
import type { RestMethod, RestRoute } from "./rest-route";
import { finishRunRoute } from "./handlers/finish-run";
import { getAttachmentContentRoute } from "./handlers/get-attachment-content";
import { getEnvironmentLeaseRoute } from "./handlers/get-environment-lease";
import { getAgentOutputRoute } from "./handlers/get-agent-output";
import { getRunRoute } from "./handlers/get-run";
import { listAttachmentsRoute } from "./handlers/list-attachments";
import { listRecoveryActionsRoute } from "./handlers/list-recovery-actions";
import { reconstructWorkspaceRoute } from "./handlers/reconstruct-workspace";
import { resolveRecoveryActionRoute } from "./handlers/resolve-recovery-action";
import { resumeWorkspaceFinalizationRoute } from "./handlers/resume-workspace-finalization";
import { retryWorkspaceExportRoute } from "./handlers/retry-workspace-export";
import { stopRunRoute } from "./handlers/stop-run";
import { uploadAttachmentRoute } from "./handlers/upload-attachment";

/** Which kind of record the path's parameter names (the matrix fills it with a real id). */
export type RestResourceKind = "issue" | "run" | "lease";

export interface RestRouteEntry {
  method: RestMethod;
  path: string;
  permission: Permission;
  resource: RestResourceKind;
  /** 501 stubs until the recovery issues implement them: authorized, valid requests get not_implemented. */
  implemented: boolean;
  handle: RestRoute["handle"];
}

function entry(route: RestRoute, resource: RestResourceKind, implemented: boolean): RestRouteEntry {
  return { method: route.method, path: route.path, permission: route.permission, resource, implemented, handle: route.handle };
}

export const REST_ROUTES: readonly RestRouteEntry[] = [
  entry(listRecoveryActionsRoute, "issue", true),
  entry(resumeWorkspaceFinalizationRoute, "issue", true),
  entry(retryWorkspaceExportRoute, "issue", true),
  entry(reconstructWorkspaceRoute, "issue", true),
  entry(resolveRecoveryActionRoute, "issue", true),
  entry(listAttachmentsRoute, "issue", true),
  entry(uploadAttachmentRoute, "issue", true),
  entry(getAttachmentContentRoute, "issue", true),
  entry(getEnvironmentLeaseRoute, "lease", true),
  entry(getRunRoute, "run", true),
  entry(getAgentOutputRoute, "run", true),
  entry(finishRunRoute, "run", true),
  entry(stopRunRoute, "run", true),
];
