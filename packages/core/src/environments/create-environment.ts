// Creating an environment (issue 21 part 5): the one service behind `copyback environment create`
// and the console's "New environment" form. The request is decided first, with no database
// (new-environment.ts); then, in one transaction, the company must exist, the name must be free
// in it, and the row and its activity row (`environment.created`) are written together. Every
// refusal writes nothing.
import { withTransaction, type Prisma, type PrismaClient } from "@copyback/db/client";
import { conflict, DomainError, isUniqueViolation } from "../errors";
import type { ProviderKind } from "../providers/types";
import { recordActivity, type Actor } from "../records/record-activity";
import { decideNewEnvironment, newEnvironmentRefusal, type NewEnvironmentRequest } from "./new-environment";

export interface CreateEnvironmentInput extends NewEnvironmentRequest {
  companyId: string;
  actor: Actor;
}

export interface CreatedEnvironment {
  id: string;
  companyId: string;
  name: string;
  provider: ProviderKind;
  pluginId: string;
  defaultLeasePolicy: string;
  config: unknown;
}

const nameTaken = (name: string) =>
  conflict("environment_name_taken", `The company already has an environment named ${JSON.stringify(name)}; nothing written.`, { field: "name" });

export async function createEnvironment(db: PrismaClient, input: CreateEnvironmentInput): Promise<CreatedEnvironment> {
  const decision = decideNewEnvironment(input);
  if (decision.kind === "reject") throw newEnvironmentRefusal(decision);
  const { environment } = decision;
  try {
    return await withTransaction(db, async (tx) => {
      const company = await tx.company.findUnique({ where: { id: input.companyId }, select: { id: true } });
      if (!company) throw new DomainError("not_found", "company_not_found", `The company ${input.companyId} was not found; nothing written.`);
      const existing = await tx.environment.findUnique({ where: { companyId_name: { companyId: input.companyId, name: environment.name } }, select: { id: true } });
      if (existing) throw nameTaken(environment.name);
      const created = await tx.environment.create({
        data: {
          companyId: input.companyId,
          name: environment.name,
          provider: environment.provider,
          pluginId: environment.pluginId,
          config: environment.config as Prisma.InputJsonObject,
          defaultLeasePolicy: environment.leasePolicy,
        },
        select: { id: true, companyId: true, name: true, provider: true, pluginId: true, defaultLeasePolicy: true, config: true },
      });
      await recordActivity(tx, {
        companyId: input.companyId,
        actor: input.actor,
        action: "environment.created",
        entityType: "environment",
        entityId: created.id,
        details: { name: created.name, provider: created.provider, pluginId: created.pluginId, leasePolicy: created.defaultLeasePolicy, config: environment.config as Prisma.InputJsonObject },
      });
      return created;
    });
  } catch (error) {
    // Two creators of one name at once: the unique index (company, name) refuses the second.
    if (isUniqueViolation(error)) throw nameTaken(environment.name);
    throw error;
  }
}
