// Per-request memoized company data: the layout and the page both need the company and the
// caller's permissions in it; React's cache makes that one query per request.
import "server-only";
import { cache } from "react";
import type { Permission } from "@copyback/core/auth";
import { serverCaller } from "~/trpc/server";
import { pageData } from "./page-call";

export const loadCompany = cache(async (companyId: string) => {
  const caller = await serverCaller();
  return pageData(() => caller.companies.get({ companyId }));
});

export async function companyPermissions(companyId: string): Promise<ReadonlySet<Permission>> {
  return new Set((await loadCompany(companyId)).permissions);
}
