import { describe, expect, it } from "vitest";
import { pickCompany } from "./company-ref";

const acme = { id: "0b9f8c1e-2a3b-4c5d-8e6f-7a8b9c0d1e2f", name: "Acme", issuePrefix: "ACME" };
const globex = { id: "1c0a9d2f-3b4c-4d6e-9f70-8b9c0d1e2f30", name: "ACME", issuePrefix: "GLX" };
const twin = { id: "2d1b0e3a-4c5d-4e7f-a081-9c0d1e2f3041", name: "Twin", issuePrefix: "ACME" };

describe("pickCompany", () => {
  it("takes an id (any case), else an issue prefix, else a name, without case", () => {
    expect(pickCompany([acme, globex], acme.id.toUpperCase())).toEqual({ kind: "one", company: acme });
    expect(pickCompany([acme, globex], "glx")).toEqual({ kind: "one", company: globex });
    // "acme" is Acme's prefix and Globex's name: the prefix wins.
    expect(pickCompany([acme, globex], " acme ")).toEqual({ kind: "one", company: acme });
    expect(pickCompany([globex], "acme")).toEqual({ kind: "one", company: globex });
  });

  it("says none, or ambiguous with every candidate, rather than guess", () => {
    expect(pickCompany([acme], "initech")).toEqual({ kind: "none" });
    expect(pickCompany([acme], globex.id)).toEqual({ kind: "none" });
    expect(pickCompany([acme, twin], "ACME")).toEqual({ kind: "ambiguous", companies: [acme, twin] });
  });
});
