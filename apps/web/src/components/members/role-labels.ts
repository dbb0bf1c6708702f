import type { Role } from "@copyback/core/auth";

export const ROLE_OPTIONS: ReadonlyArray<{ value: Role; label: string }> = [
  { value: "owner", label: "Owner" },
  { value: "admin", label: "Admin" },
  { value: "runtime_manager", label: "Runtime manager" },
  { value: "member", label: "Member" },
];

export const ROLE_LABEL: Record<Role, string> = Object.fromEntries(
  ROLE_OPTIONS.map((o) => [o.value, o.label]),
) as Record<Role, string>;
