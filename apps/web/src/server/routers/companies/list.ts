import { visibleCompanies } from "@copyback/core/auth";
import { authenticatedProcedure } from "~/server/trpc";

/** The companies the principal can see, oldest first (the switcher's list). */
export const listCompanies = authenticatedProcedure.query(({ ctx }) => {
  const visible = visibleCompanies(ctx.principal);
  return ctx.db.company.findMany({
    where: visible === "all" ? {} : { id: { in: visible } },
    orderBy: { createdAt: "asc" },
    select: { id: true, name: true },
  });
});
