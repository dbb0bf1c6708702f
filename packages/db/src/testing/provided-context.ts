// What the integration tier's globalSetup hands to every test file (vitest `provide`/`inject`).
export interface TestDatabaseContext {
  /** A superuser URL on the test server (any database of it). */
  adminUrl: string;
  /** The migrated database every test database is cloned from. Never connect to it. */
  templateDatabase: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    copybackTestDatabase: TestDatabaseContext;
  }
}
