// `--company <id|prefix|name>`: which company a command means. The company's id (a UUID), else
// its issue prefix (the "ACME" of ACME-12, what an operator sees on every task) or its name,
// compared without case. Companies have no unique handle besides the id, so a prefix or a name two
// companies share is refused with their ids rather than guessed. The lookup is the command's;
// picking is pure.
import { z } from "zod";

export interface CompanyCandidate {
  id: string;
  name: string;
  issuePrefix: string;
}

export type CompanyPick =
  | { kind: "one"; company: CompanyCandidate }
  | { kind: "none" }
  | { kind: "ambiguous"; companies: CompanyCandidate[] };

export const isUuid = (ref: string): boolean => z.uuid().safeParse(ref).success;

export function pickCompany(candidates: readonly CompanyCandidate[], ref: string): CompanyPick {
  const wanted = ref.trim().toLowerCase();
  const by = (match: (c: CompanyCandidate) => boolean): CompanyPick | null => {
    const found = candidates.filter(match);
    if (found.length === 1) return { kind: "one", company: found[0]! };
    return found.length > 1 ? { kind: "ambiguous", companies: found } : null;
  };
  if (isUuid(wanted)) return by((c) => c.id.toLowerCase() === wanted) ?? { kind: "none" };
  // A prefix is the shorter, more deliberate handle: it wins over a name that happens to equal it.
  return by((c) => c.issuePrefix.toLowerCase() === wanted) ?? by((c) => c.name.toLowerCase() === wanted) ?? { kind: "none" };
}
