import { describe, expect, it } from "vitest";
import { listingMismatch, parsePackListing } from "./pack";

const A = "a".repeat(64);
const B = "b".repeat(64);

describe("the Daytona pack placement's check", () => {
  it("R-PV-1 reads the sandbox's sha256sum listing and refuses any other line", () => {
    expect(parsePackListing(`${A}  ./bin/rt\n${B}  ./copyback-pack.json\n`)).toEqual(new Map([["bin/rt", A], ["copyback-pack.json", B]]));
    expect(parsePackListing("")).toEqual(new Map());
    expect(parsePackListing(`${A}  bin/rt\n`)).toBeNull();
    expect(parsePackListing(`sha256sum: ./x: Permission denied\n`)).toBeNull();
  });

  it("R-PV-1 the sandbox must hold exactly the files sent: none missing, none other, none extra", () => {
    const sent = new Map([["bin/rt", A], ["lib/a", B]]);
    expect(listingMismatch(new Map(sent), sent)).toBeNull();
    expect(listingMismatch(new Map([["bin/rt", A]]), sent)).toBe("lib/a is missing");
    expect(listingMismatch(new Map([["bin/rt", A], ["lib/a", A]]), sent)).toBe("lib/a holds other bytes");
    expect(listingMismatch(new Map([...sent, ["extra", A]]), sent)).toBe("extra was not sent");
  });
});
