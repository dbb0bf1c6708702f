// The console's "use client" components are bundled for the browser: what they import from core has
// to come through core's client-safe entry (@copyback/core/ui), and nothing they reach, through
// the app's own files or through that entry, may be a server module (node:*, pg, Prisma,
// better-sqlite3), or a barrel of core would pull the server into the browser bundle.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  importClosure,
  isServerModule,
  resolveRelative,
  resolveSourceFile,
  type Resolve,
} from "@copyback/core/test-support/import-closure";

const webSrc = path.resolve(import.meta.dirname, "../src");
const coreRoot = path.resolve(import.meta.dirname, "../../../packages/core");
const coreExports = (
  JSON.parse(readFileSync(path.join(coreRoot, "package.json"), "utf8")) as {
    exports: Record<string, string>;
  }
).exports;

/** Core's entries a client component may import (packages/core/README.md, "Entry points"). */
const CLIENT_SAFE_CORE_ENTRIES = ["@copyback/core/ui"];

const CORE_SPECIFIER = /^@copyback\/core(\/.*)?$/;

/** The app's `~/` alias, relative paths, and core's exported entries (so the walk goes on into core). */
const resolveConsole: Resolve = (fromFile, specifier) => {
  if (specifier.startsWith("~/")) return resolveSourceFile(path.join(webSrc, specifier.slice(2)));
  const core = CORE_SPECIFIER.exec(specifier);
  if (core) {
    const target = coreExports[`.${core[1] ?? ""}`];
    return target ? path.join(coreRoot, target) : null;
  }
  return resolveRelative(fromFile, specifier);
};

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !/\.(test|integration-test)\.tsx?$/.test(entry.name)
      ? [full]
      : [];
  });

const clientComponents = sourceFiles(webSrc).filter((file) =>
  /^\s*["']use client["']/.test(readFileSync(file, "utf8")),
);

/** Each core specifier a client component's value imports reach, with the chain that reaches it. */
function coreImportsOfClients(): Map<string, string[]> {
  const reached = new Map<string, string[]>();
  const { external } = importClosure(clientComponents, (from, specifier) =>
    CORE_SPECIFIER.test(specifier) ? null : resolveConsole(from, specifier),
  );
  for (const [specifier, chain] of external)
    if (CORE_SPECIFIER.test(specifier)) reached.set(specifier, chain);
  return reached;
}

const shortChain = (chain: string[]) =>
  chain.map((file) => path.relative(path.resolve(webSrc, "../../.."), file)).join(" -> ");

describe("client components and core", () => {
  it("finds the console's client components and the core entry they import (the checks below are not vacuous)", () => {
    expect(clientComponents.length).toBeGreaterThan(10);
    expect([...coreImportsOfClients().keys()]).toContain("@copyback/core/ui");
  });

  it("imports core only through its client-safe entry from a client component", () => {
    const offending = [...coreImportsOfClients()]
      .filter(([specifier]) => !CLIENT_SAFE_CORE_ENTRIES.includes(specifier))
      .map(([specifier, chain]) => `${shortChain(chain)} -> ${specifier}`);
    expect(offending).toEqual([]);
  });

  it("reaches no server module from a client component, through the app's files or core's entry", () => {
    const { external } = importClosure(clientComponents, resolveConsole);
    const offending = [...external]
      .filter(([specifier]) => isServerModule(specifier))
      .map(([specifier, chain]) => `${shortChain(chain)} -> ${specifier}`);
    expect(offending).toEqual([]);
  });
});
