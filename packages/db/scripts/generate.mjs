// `prisma generate` downloads the schema engine unless PRISMA_SCHEMA_ENGINE_BINARY names an
// existing file; generation itself never runs that engine, so any file will do (ENVIRONMENT.md).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
env.PRISMA_HIDE_UPDATE_MESSAGE = "1";
env.CHECKPOINT_DISABLE = "1";
const result = spawnSync("prisma", ["generate"], { cwd: path.join(here, ".."), env, stdio: "inherit", shell: false });
process.exit(result.status ?? 1);
