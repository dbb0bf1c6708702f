import { z } from "zod";
import { ROLES } from "@copyback/core/auth";

export const roleSchema = z.enum(ROLES);
export const membershipStatusSchema = z.enum(["active", "suspended"]);
export type MembershipStatusValue = z.infer<typeof membershipStatusSchema>;

export const membershipChangeOutput = z.object({
  id: z.uuid(),
  role: roleSchema,
  status: membershipStatusSchema,
});
