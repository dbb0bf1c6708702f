// The network namespaces' address plan (netns.ts, issue 23 part 3): each host's namespace name,
// veth names within the kernel's 15 characters, a /30 of its own with the root side .1 and the
// host side .2, distinct between hosts and between two torture processes; and the leftover names.
import { describe, expect, it } from "vitest";
import { netnsPlan, pidOfName, urlVia } from "./netns";

describe("netnsPlan", () => {
  it("names one namespace per host and gives each a /30 with the root side first", () => {
    const plan = netnsPlan(4242, 2);
    expect(plan.map((h) => h.name)).toEqual(["cb-torture-4242-a", "cb-torture-4242-b"]);
    expect(plan[0]).toMatchObject({ rootIf: "cbt4242ar", nsIf: "cbt4242an" });
    for (const h of plan) {
      const [net, bits] = h.subnet.split("/");
      expect(bits).toBe("30");
      const last = Number(net!.split(".")[3]);
      expect(last % 4).toBe(0);
      expect(h.rootAddress).toBe(net!.replace(/\.\d+$/, `.${last + 1}`));
      expect(h.nsAddress).toBe(net!.replace(/\.\d+$/, `.${last + 2}`));
      expect(h.subnet.startsWith("10.213.")).toBe(true);
    }
    expect(new Set(plan.map((h) => h.subnet)).size).toBe(2);
  });

  it("keeps interface names within 15 characters for the largest PID", () => {
    for (const h of netnsPlan(4_194_304, 4)) {
      expect(h.rootIf.length).toBeLessThanOrEqual(15);
      expect(h.nsIf.length).toBeLessThanOrEqual(15);
    }
  });

  it("gives two torture processes distinct subnets", () => {
    const a = netnsPlan(1000, 4).map((h) => h.subnet);
    const b = netnsPlan(1001, 4).map((h) => h.subnet);
    expect(a.filter((s) => b.includes(s))).toEqual([]);
    for (const pid of [1, 4095, 4096, 65_535, 4_194_304]) for (const h of netnsPlan(pid, 4)) expect(h.subnet).toMatch(/^10\.213\.(\d|[1-9]\d|1\d\d|2[0-4]\d|25[0-5])\.\d+\/30$/);
  });

  it("refuses counts it has no letters for", () => {
    expect(() => netnsPlan(1, 0)).toThrow();
    expect(() => netnsPlan(1, 5)).toThrow();
  });
});

describe("pidOfName and urlVia", () => {
  it("reads the PID from this naming only", () => {
    expect(pidOfName("cb-torture-77-b")).toBe(77);
    expect(pidOfName("cbt77ar")).toBe(77);
    expect(pidOfName("cbt77an")).toBe(77);
    expect(pidOfName("cb-torture-x-a")).toBeNull();
    expect(pidOfName("eth0")).toBeNull();
  });

  it("swaps the host and port of a database URL, keeping the rest", () => {
    expect(urlVia("postgresql://u:p@127.0.0.1:5432/db?x=1", "10.213.0.1")).toBe("postgresql://u:p@10.213.0.1:5432/db?x=1");
    expect(urlVia("postgresql://postgres@127.0.0.1:5432/db", "10.213.0.5", 40001)).toBe("postgresql://postgres@10.213.0.5:40001/db");
  });
});
