// The package's face: outside packages import core only through the curated entries that
// package.json exports (a deep path is not exported, so a new outside import has to go through an
// entry), each entry re-exports names (never a whole folder), and the client-safe entry reaches
// no server module, so the console's "use client" components can import it without pulling the
// server into the browser bundle.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { importClosure, isServerModule } from "../support/import-closure";

const coreRoot = path.resolve(import.meta.dirname, "../..");
const entriesDir = path.join(coreRoot, "src/entries");
const exportsMap = (
  JSON.parse(readFileSync(path.join(coreRoot, "package.json"), "utf8")) as {
    exports: Record<string, string>;
  }
).exports;

/** The entries whose closure must be server-free: imported by the console's client components. */
const CLIENT_SAFE_ENTRIES = ["./ui"];

const serverModulesOf = (entry: string) => {
  const target = exportsMap[entry];
  if (!target) throw new Error(`${entry} is not exported`);
  const { external } = importClosure([path.join(coreRoot, target)]);
  return [...external.keys()].filter(isServerModule);
};

describe("core's entry points", () => {
  it("exports no deep wildcard: only named entries, and the test fixtures", () => {
    const wildcards = Object.keys(exportsMap).filter((key) => key.includes("*"));
    expect(wildcards).toEqual(["./test-support/*"]);
  });

  it("exports every file of src/entries under its own name, and each target exists", () => {
    for (const file of readdirSync(entriesDir)) {
      expect(exportsMap[`./${file.replace(/\.ts$/, "")}`]).toBe(`./src/entries/${file}`);
    }
    for (const [key, target] of Object.entries(exportsMap)) {
      if (key.includes("*")) continue;
      expect(() => readFileSync(path.join(coreRoot, target)), `${key} -> ${target}`).not.toThrow();
    }
  });

  it("re-exports names in every entry of src/entries, never a whole module (export *)", () => {
    for (const file of readdirSync(entriesDir)) {
      const source = ts.createSourceFile(
        file,
        readFileSync(path.join(entriesDir, file), "utf8"),
        ts.ScriptTarget.Latest,
      );
      for (const statement of source.statements) {
        expect(
          ts.isExportDeclaration(statement) &&
            !!statement.exportClause &&
            ts.isNamedExports(statement.exportClause),
          `${file}: ${statement.getText(source)}`,
        ).toBe(true);
      }
    }
  });

  it.each(CLIENT_SAFE_ENTRIES)(
    "keeps the client-safe entry %s free of server modules (node:*, pg, Prisma, better-sqlite3)",
    (entry) => {
      expect(serverModulesOf(entry)).toEqual([]);
    },
  );

  it("sees the server modules a server entry reaches (the check above can fail)", () => {
    const reached = serverModulesOf("./recovery");
    expect(reached).toEqual(expect.arrayContaining(["@copyback/db/client"]));
    expect(reached.some((specifier) => specifier.startsWith("node:"))).toBe(true);
  });

  it("refuses an entry that is not exported with a clear error", () => {
    expect(() => serverModulesOf("./recovery/holds")).toThrow("./recovery/holds is not exported");
  });
});
