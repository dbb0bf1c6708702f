// The harness's own settings from the environment (DESIGN.md section 7: process.env is read here only).
export const harnessEnv = {
  testDatabaseUrl: process.env.COPYBACK_TEST_DATABASE_URL?.trim() || undefined,
  inherited: (): NodeJS.ProcessEnv => ({ ...process.env }),
};
