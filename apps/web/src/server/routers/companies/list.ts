import { z } from "zod";
import { visibleCompanies } from "@copyback/core/auth";
import { authenticatedProcedure } from "~/server/trpc";

export const listCompaniesOutput = z.array(z.object({ id: z.uuid(), name: z.string() }));

/** The companies the principal can see, oldest first (the switcher's list). */
export const listCompanies = authenticatedProcedure.output(listCompaniesOutput).query(({ ctx }) => {
  const visible = visibleCompanies(ctx.principal);
  return ctx.db.company.findMany({
    where: visible === "all" ? {} : { id: { in: visible } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: 500,
    select: { id: true, name: true },
  });
});
