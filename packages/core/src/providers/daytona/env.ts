// The one place the Daytona provider reads the controller's environment: the API key's variable,
// by the name an environment's config gives (credentials.ts), at the moment a call needs it.
export function controllerVariable(name: string): string | undefined {
  return process.env[name];
}
