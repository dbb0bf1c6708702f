import { defineConfig } from "vitest/config";
import { tiers } from "../../vitest.tiers";

export default defineConfig({ test: { projects: tiers() } });
