// Loaders of the resource a REST path names. Each answers the resource's company (what
// `authorize` decides on) or null when there is no such resource; a malformed id is simply not
// found. Another company's resource is found here and then refused by `authorize` as not_found,
// so both read the same to the caller.
import { z } from "zod";
import type { PrismaClient } from "@copyback/db/client";

export interface LoadedResource {
  companyId: string;
}

export type ResourceLoader<R extends LoadedResource> = (db: PrismaClient, params: Readonly<Record<string, string>>) => Promise<R | null>;

const uuid = z.uuid();

function idParam(params: Readonly<Record<string, string>>, name: string): string | null {
  const value = params[name];
  return value !== undefined && uuid.safeParse(value).success ? value : null;
}

export interface IssueResource extends LoadedResource {
  kind: "issue";
  id: string;
}

/** `/api/issues/:id/...` */
export const issueFromPath: ResourceLoader<IssueResource> = async (db, params) => {
  const id = idParam(params, "id");
  if (!id) return null;
  const issue = await db.issue.findUnique({ where: { id }, select: { id: true, companyId: true } });
  return issue ? { kind: "issue", ...issue } : null;
};

export interface RunResource extends LoadedResource {
  kind: "run";
  id: string;
  agentId: string;
}

/** `/api/runs/:id/...` */
export const runFromPath: ResourceLoader<RunResource> = async (db, params) => {
  const id = idParam(params, "id");
  if (!id) return null;
  const run = await db.heartbeatRun.findUnique({ where: { id }, select: { id: true, companyId: true, agentId: true } });
  return run ? { kind: "run", ...run } : null;
};

export interface LeaseResource extends LoadedResource {
  kind: "lease";
  id: string;
}

/** `/api/environment-leases/:leaseId` */
export const leaseFromPath: ResourceLoader<LeaseResource> = async (db, params) => {
  const id = idParam(params, "leaseId");
  if (!id) return null;
  const lease = await db.environmentLease.findUnique({ where: { id }, select: { id: true, companyId: true } });
  return lease ? { kind: "lease", ...lease } : null;
};
