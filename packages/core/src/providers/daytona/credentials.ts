// The Daytona API key, read from the controller's environment by the variable's NAME (config.ts
// apiKeyEnv) at the moment a call needs it. The key is never stored, logged or put in an error:
// errors name the variable only.
import { DomainError } from "../../errors";
import { controllerVariable } from "./env";

/** Where variables are read from (the controller's process environment by default). */
export type VariableSource = (name: string) => string | undefined;

export const processVariables: VariableSource = controllerVariable;

export function missingKeyError(variable: string): DomainError {
  return new DomainError(
    "unavailable",
    "provider_credentials_missing",
    `The Daytona API key is missing: the environment variable ${variable} is not set on this controller.`,
    { variable },
  );
}

export function rejectedKeyError(variable: string, status: number): DomainError {
  return new DomainError(
    "unavailable",
    "provider_credentials_rejected",
    `Daytona rejected the API key in the environment variable ${variable} (HTTP ${status}); set a valid key there.`,
    { variable, status },
  );
}

/** The key, or provider_credentials_missing naming the variable. */
export function readApiKey(source: VariableSource, variable: string): string {
  const value = source(variable);
  if (value === undefined || value.trim() === "") throw missingKeyError(variable);
  return value.trim();
}
