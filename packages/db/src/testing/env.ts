// The harness's only configuration: an existing server to run the integration tier against.
// Unset: the harness starts an embedded PostgreSQL of its own.
export function testServerUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = env.COPYBACK_TEST_DATABASE_URL?.trim() || env.DATABASE_URL?.trim();
  return url ? url : undefined;
}
