// The Daytona emulator of the browser journey (tests/auth-daytona-export-recovery.e2e.ts). It is a
// test tool (packages/core/test/support/daytona): never registered as a provider. The launcher's
// worker only gets the name and value of an API key variable (playwright.config.ts); the test starts
// the emulator with that key and writes the environment that points at it, as an operator would.
export const DAYTONA_E2E_KEY_VARIABLE = "DAYTONA_E2E_EMULATOR_KEY";
/** Not a secret: the emulator accepts exactly this key, and it reaches nothing but the emulator. */
export const DAYTONA_E2E_KEY = "e2e-daytona-emulator-key";
