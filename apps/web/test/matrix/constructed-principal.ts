// R-UI-5 needs principals whose role data is missing or unknown. The database cannot hold them
// (membership_role is an enum and the role column is NOT NULL), so the matrix constructs them and
// hands them to principal resolution through a test-only header. The matrix files mock
// `resolvePrincipal` with `resolvePrincipalWithConstructed`: every request without the header
// still goes through the real resolution (sessions, keys, local mode).
import type { Principal } from "@copyback/core/auth";

export const CONSTRUCTED_PRINCIPAL_HEADER = "x-authz-matrix-principal";

export function constructedPrincipalHeaders(principal: Principal): Record<string, string> {
  return {
    [CONSTRUCTED_PRINCIPAL_HEADER]: Buffer.from(JSON.stringify(principal), "utf8").toString(
      "base64url",
    ),
  };
}

export function constructedPrincipalOf(headers: Headers): Principal | null {
  const value = headers.get(CONSTRUCTED_PRINCIPAL_HEADER);
  return value === null
    ? null
    : (JSON.parse(Buffer.from(value, "base64url").toString("utf8")) as Principal);
}

/** The mock's body: the constructed principal when the header is there, else the real resolution. */
export function resolvePrincipalWithConstructed(real: (headers: Headers) => Promise<Principal>) {
  return (headers: Headers): Promise<Principal> => {
    const constructed = constructedPrincipalOf(headers);
    return constructed ? Promise.resolve(constructed) : real(headers);
  };
}
