#!/usr/bin/env node
// The operator CLI. Runs the TypeScript sources through tsx so every workspace package and
// the repository root (`pnpm copyback ...`) use exactly the code the worker uses.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
