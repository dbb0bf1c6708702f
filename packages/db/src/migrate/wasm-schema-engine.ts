// Prisma's schema engine compiled to WebAssembly (@prisma/schema-engine-wasm), driven through
// adapter-pg. The native engine cannot be downloaded on our machines (ENVIRONMENT.md); this one
// ships in the npm package. Its JS glue imports the .wasm as an ES module, which Node does not
// support without a flag, so the module is instantiated here by hand, once per process.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import * as glue from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { SchemaEngine } from "@prisma/schema-engine-wasm";
import { createEngineAdapterFactory } from "./schema-engine-adapter";
import { MigrationError } from "./errors";

export type { SchemaEngine };

// The compiler's lib (ES2023, no DOM) does not declare WebAssembly's values; Node has them.
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  instantiate(module: object, imports: Record<string, object>): Promise<{ exports: unknown }>;
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

// --- Panics ------------------------------------------------------------------------------
// The glue reports a Rust panic through `globalThis.PRISMA_WASM_PANIC_REGISTRY.set_message`,
// then the wasm traps. Prisma Client's runtime installs a registry of its own there whose
// set_message throws, which would leave our call's promise pending forever. So while an engine
// call runs, our registry is installed: it fails the call at once with the panic text. A wasm
// instance that panicked is in an undefined state, so the process never uses it again.
interface PanicRegistry {
  set_message(message: string): void;
}
const globals = globalThis as unknown as { PRISMA_WASM_PANIC_REGISTRY?: PanicRegistry };
let poisonedBy: string | null = null;

// --- Timers --------------------------------------------------------------------------------
// The engine arms timers it never clears (e.g. a 10 s timeout around Prisma's advisory lock),
// which would keep a finished process alive for seconds. Timers are recorded here and cleared
// once the engine that armed them is freed; none of their callbacks matters after that.
const engineTimers = new Set<ReturnType<typeof setTimeout>>();

function gluedImports(): Record<string, object> {
  const imports: Record<string, unknown> = { ...glue };
  for (const name of Object.keys(imports)) {
    if (name.startsWith("__wbg_setTimeout_")) {
      imports[name] = (callback: () => void, ms: number) => {
        const timer = setTimeout(() => {
          engineTimers.delete(timer);
          callback();
        }, ms >>> 0);
        engineTimers.add(timer);
        return timer;
      };
    }
  }
  return { "./schema_engine_bg.js": imports as object };
}

let instantiated: Promise<void> | null = null;

function instantiate(): Promise<void> {
  instantiated ??= (async () => {
    const require = createRequire(import.meta.url);
    const gluePath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
    const bytes = await readFile(
      gluePath.replace(/schema_engine_bg\.js$/, "schema_engine_bg.wasm"),
    );
    const module = await wasmApi.compile(bytes);
    const instance = await wasmApi.instantiate(module, gluedImports());
    const exports = instance.exports as { __wbindgen_start(): void };
    glue.__wbg_set_wasm(exports);
    exports.__wbindgen_start();
  })().catch((error: unknown) => {
    instantiated = null;
    throw error;
  });
  return instantiated;
}

// One engine call at a time per process: the wasm instance is single-threaded and shared.
let queue: Promise<unknown> = Promise.resolve();

export interface EngineOptions {
  databaseUrl: string;
  /** Prisma schema files (path, content) the engine parses at start; not needed to apply. */
  schemaFiles?: Array<{ path: string; content: string }>;
}

/**
 * Runs `work` with a fresh schema engine connected to `databaseUrl`, then frees the engine
 * and closes every connection it opened (shadow databases are dropped).
 */
export async function withSchemaEngine<T>(
  options: EngineOptions,
  work: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const run = async (): Promise<T> => {
    if (poisonedBy !== null) {
      throw new MigrationError(
        "engine_panicked",
        `The schema engine crashed earlier in this process (${poisonedBy}); restart the process to use it again.`,
      );
    }
    await instantiate();
    const factory = createEngineAdapterFactory(options.databaseUrl);
    let engine: SchemaEngine | null = null;
    let panicked: (message: string) => void = () => undefined;
    const panic = new Promise<never>((_, reject) => {
      panicked = (message) =>
        reject(new MigrationError("engine_panicked", `The schema engine crashed: ${message}`));
    });
    panic.catch(() => undefined); // observed through the race below
    const previousRegistry = globals.PRISMA_WASM_PANIC_REGISTRY;
    globals.PRISMA_WASM_PANIC_REGISTRY = {
      set_message(message: string) {
        poisonedBy = message.split("\n")[0] ?? message;
        panicked(message);
      },
    };
    try {
      const datamodels = options.schemaFiles?.map((file): [string, string] => [
        file.path,
        file.content,
      ]);
      const operation = (async () => {
        engine = await glue.SchemaEngine.new(
          { datamodels },
          () => undefined,
          bindMigrationAwareSqlAdapterFactory(factory),
        );
        return work(engine);
      })();
      return await Promise.race([operation, panic]);
    } catch (error) {
      throw MigrationError.fromEngine(error);
    } finally {
      globals.PRISMA_WASM_PANIC_REGISTRY = previousRegistry;
      if (poisonedBy === null) (engine as SchemaEngine | null)?.free();
      await factory.disposeAll();
      for (const timer of engineTimers) clearTimeout(timer);
      engineTimers.clear();
    }
  };
  const result = queue.then(run, run);
  queue = result.catch(() => undefined);
  return result;
}

/** The engine's "no filters" value: Copyback manages every table and enum in its schema. */
export const NO_SCHEMA_FILTER = { externalTables: [], externalEnums: [] };
