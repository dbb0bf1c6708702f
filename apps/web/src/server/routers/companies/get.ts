import { z } from "zod";
import { ALL_PERMISSIONS, authorize, type Permission } from "@copyback/core/auth";
import { notFound } from "@copyback/core/errors";
import { companyProcedure } from "~/server/trpc";

export const getCompanyOutput = z.object({
  id: z.uuid(),
  name: z.string(),
  issuePrefix: z.string(),
  /**
   * What the principal may do here, from the one `authorize` decision. Pages use it only to hide
   * controls; every procedure still checks its own permission.
   */
  permissions: z.array(z.enum(ALL_PERMISSIONS as [Permission, ...Permission[]])),
});

/** The company shell's data: name and the caller's permissions in it. */
export const getCompany = companyProcedure("company:read")
  .output(getCompanyOutput)
  .query(async ({ ctx }) => {
    const company = await ctx.db.company.findUnique({
      where: { id: ctx.companyId },
      select: { id: true, name: true, issuePrefix: true },
    });
    if (!company) throw notFound("The company");
    const permissions = ALL_PERMISSIONS.filter(
      (permission) => authorize(ctx.principal, permission, ctx.companyId).kind === "allow",
    );
    return { ...company, permissions };
  });
