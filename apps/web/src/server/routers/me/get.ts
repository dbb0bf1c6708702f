import { z } from "zod";
import type { Principal } from "@copyback/core/auth";
import type { PrismaClient } from "@copyback/db/client";
import { publicProcedure } from "~/server/trpc";

export const meOutput = z.object({
  kind: z.enum(["anonymous", "local_board", "board_user", "agent"]),
  /** How a board user is signed in: the console session, or a board API key. */
  via: z.enum(["session", "board_api_key"]).nullable(),
  user: z.object({ id: z.uuid(), name: z.string(), email: z.string() }).nullable(),
  isInstanceAdmin: z.boolean(),
  agent: z.object({ id: z.uuid(), name: z.string(), companyId: z.uuid() }).nullable(),
  /** A board user's companies (a key's: its one company), suspended ones included so the UI can say so. */
  memberships: z.array(z.object({ companyId: z.uuid(), companyName: z.string(), role: z.string(), status: z.string() })),
});

export type Me = z.infer<typeof meOutput>;

/**
 * Who is asking, for the console's header and sign-in redirects. Public: an anonymous caller gets
 * `kind: "anonymous"` rather than an error, so the layout can offer sign-in.
 */
export const getMe = publicProcedure.output(meOutput).query(({ ctx }) => describePrincipal(ctx.db, ctx.principal));

async function describePrincipal(db: PrismaClient, principal: Principal): Promise<Me> {
  const base = { via: null, user: null, isInstanceAdmin: false, agent: null, memberships: [] };
  switch (principal.kind) {
    case "anonymous":
    case "local_board":
      return { ...base, kind: principal.kind };
    case "agent": {
      const agent = await db.agent.findUnique({ where: { id: principal.agentId }, select: { id: true, name: true, companyId: true } });
      return { ...base, kind: "agent", agent };
    }
    case "board_user": {
      const user = await db.user.findUnique({ where: { id: principal.userId }, select: { id: true, name: true, email: true } });
      const companyIds = principal.memberships.map((m) => m.companyId);
      const companies = await db.company.findMany({ where: { id: { in: companyIds } }, select: { id: true, name: true } });
      const names = new Map(companies.map((c) => [c.id, c.name]));
      return {
        ...base,
        kind: "board_user",
        via: principal.via,
        user,
        isInstanceAdmin: principal.isInstanceAdmin,
        memberships: principal.memberships
          .map((m) => ({ companyId: m.companyId, companyName: names.get(m.companyId) ?? "", role: m.role ?? "unknown", status: m.status ?? "unknown" }))
          .sort((a, b) => a.companyName.localeCompare(b.companyName)),
      };
    }
  }
}
