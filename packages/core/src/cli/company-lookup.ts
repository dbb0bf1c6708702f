// The company a `--company` reference names, read from the database (company-ref.ts picks).
import type { PrismaClient } from "@copyback/db/client";
import { CliError } from "./errors";
import { EXIT } from "./exit-codes";
import { isUuid, pickCompany, type CompanyCandidate } from "./company-ref";

export async function lookupCompany(prisma: PrismaClient, ref: string): Promise<CompanyCandidate> {
  const wanted = ref.trim();
  const candidates = await prisma.company.findMany({
    where: isUuid(wanted)
      ? { id: wanted.toLowerCase() }
      : { OR: [{ issuePrefix: { equals: wanted, mode: "insensitive" } }, { name: { equals: wanted, mode: "insensitive" } }] },
    select: { id: true, name: true, issuePrefix: true },
    take: 20,
  });
  const pick = pickCompany(candidates, wanted);
  if (pick.kind === "one") return pick.company;
  if (pick.kind === "none") throw new CliError(EXIT.failed, "company_not_found", `No company has the id, issue prefix or name ${JSON.stringify(wanted)}.`);
  throw new CliError(
    EXIT.usage,
    "company_ambiguous",
    `${pick.companies.length} companies answer to ${JSON.stringify(wanted)} (${pick.companies.map((c) => `${c.name} ${c.id}`).join(", ")}); give the id.`,
  );
}
