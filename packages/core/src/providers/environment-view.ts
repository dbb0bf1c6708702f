// The console's Environments page, as data: each environment's provider, plugin, default lease
// policy and its configuration as validated by the provider's own zod schema, and, for a daytona
// environment, whether the variable its key is read from is set. Pure: the caller passes the rows
// and a lookup of the process environment (the console's; the page says the worker's is what counts).
//
// It lives beside environment-config.ts (providers/), not in board/: it parses with the providers'
// schemas, and board/ stands below providers on its floor.
//
// Secrets: a Daytona key is never stored (config.ts); the view shows only the NAME of the variable
// and whether it is set, never its value. A configuration holding any key-like field (a secret
// pasted into the JSON by hand) is never echoed, whatever its provider: only the field's path is named.
import type { z } from "zod";
import { daytonaEnvironmentConfig } from "./daytona/config";
import { fakeEnvironmentConfig } from "./fake/config";
import { localEnvironmentConfig } from "./local/config";
import type { ProviderKind } from "./types";

export interface EnvironmentRow {
  id: string;
  name: string;
  provider: ProviderKind;
  pluginId: string;
  defaultLeasePolicy: string;
  config: unknown;
}

export interface DaytonaConfigView {
  kind: "daytona";
  apiUrl: string;
  target: string | null;
  /** What a new sandbox is created from. */
  source: { kind: "snapshot" | "image"; name: string } | { kind: "default" };
  resources: { cpu: number | null; memoryGiB: number | null; diskGiB: number | null } | null;
  labels: Array<{ key: string; value: string }>;
  autoStopMinutes: number | null;
  autoArchiveMinutes: number | null;
  autoDeleteMinutes: number | null;
  /** The NAME of the variable holding the key; its value is never read into the view. */
  apiKeyEnv: string;
}

export type EnvironmentConfigView =
  | DaytonaConfigView
  /** local and fake: each top-level setting as validated (defaults applied), as short JSON. */
  | { kind: "settings"; entries: Array<{ key: string; value: string }> }
  /** Holds a key-like field: not shown at all. */
  | { kind: "withheld"; text: string; fields: string[] }
  | { kind: "invalid"; text: string }
  /** No built-in provider of this instance reads it: nothing here knows what it means, so it is not shown. */
  | { kind: "unsupported"; text: string };

export interface EnvironmentCredentialView {
  variable: string;
  set: boolean;
  text: string;
}

export interface EnvironmentView {
  id: string;
  name: string;
  provider: ProviderKind;
  pluginId: string;
  defaultLeasePolicy: string;
  configuration: EnvironmentConfigView;
  /** Daytona only, and only once its config validated (it names the variable). */
  credential: EnvironmentCredentialView | null;
}

/** A shown setting value longer than this is cut (a fake turn's file contents can be megabytes). */
export const MAX_SETTING_CHARS = 200;

// A field name that looks like it holds a secret. Normalised (lower case, letters and digits only)
// so apiKey, api_key and API-KEY are one word. Ending in "key" or containing a secret word; a
// name that ends in "env" (apiKeyEnv: a variable's NAME) is not a secret. Deliberately wide: a
// false alarm hides a configuration, a miss would show a secret.
const SECRET_WORDS = ["token", "secret", "password", "passwd", "credential", "bearer", "jwt", "authorization", "privatekey", "apikey"];
export function isKeyLikeField(field: string): boolean {
  const word = field.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (word.endsWith("env")) return false;
  return word.endsWith("key") || SECRET_WORDS.some((s) => word.includes(s));
}

/** Every key-like field's path in a JSON value (object keys at any depth, arrays walked). */
export function keyLikeFields(value: unknown, at: string[] = []): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => keyLikeFields(item, [...at, String(i)]));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) => {
    const here = [...at, key];
    return isKeyLikeField(key) ? [here.join(".")] : keyLikeFields(inner, here);
  });
}

// zod's messages name paths and expectations, not the input's values.
function zodMessage(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "config"}: ${i.message}`).join("; ");
}

function invalid(error: z.ZodError): EnvironmentConfigView {
  return { kind: "invalid", text: `invalid configuration: ${zodMessage(error)}` };
}

function settingValue(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  return text.length > MAX_SETTING_CHARS ? `${text.slice(0, MAX_SETTING_CHARS)}… (${text.length} characters)` : text;
}

function settings(parsed: Record<string, unknown>): EnvironmentConfigView {
  return { kind: "settings", entries: Object.keys(parsed).sort().map((key) => ({ key, value: settingValue(parsed[key]) })) };
}

function daytonaView(config: z.infer<typeof daytonaEnvironmentConfig>): DaytonaConfigView {
  return {
    kind: "daytona",
    apiUrl: config.apiUrl,
    target: config.target ?? null,
    source: config.snapshot !== undefined ? { kind: "snapshot", name: config.snapshot } : config.image !== undefined ? { kind: "image", name: config.image } : { kind: "default" },
    resources: config.resources ? { cpu: config.resources.cpu ?? null, memoryGiB: config.resources.memory ?? null, diskGiB: config.resources.disk ?? null } : null,
    labels: Object.keys(config.labels).sort().map((key) => ({ key, value: config.labels[key]! })),
    autoStopMinutes: config.autoStopMinutes ?? null,
    autoArchiveMinutes: config.autoArchiveMinutes ?? null,
    autoDeleteMinutes: config.autoDeleteMinutes ?? null,
    apiKeyEnv: config.apiKeyEnv,
  };
}

/** Whether the key's variable is set here; a blank value counts as not set (the plugin refuses it too). */
export function credentialView(variable: string, lookupEnv: (name: string) => string | undefined): EnvironmentCredentialView {
  const value = lookupEnv(variable);
  const set = value !== undefined && value.trim() !== "";
  return { variable, set, text: set ? "set" : `not set: set ${variable} in the worker's environment` };
}

function parsedConfig(row: EnvironmentRow) {
  const config = row.config ?? {};
  switch (row.provider) {
    case "daytona":
      return { schema: "daytona" as const, result: daytonaEnvironmentConfig.safeParse(config) };
    case "local":
      return { schema: "settings" as const, result: localEnvironmentConfig.safeParse(config) };
    case "fake":
      return { schema: "settings" as const, result: fakeEnvironmentConfig.safeParse(config) };
    default:
      return null;
  }
}

/** One environment as the page shows it. */
export function environmentView(row: EnvironmentRow, lookupEnv: (name: string) => string | undefined): EnvironmentView {
  const base = { id: row.id, name: row.name, provider: row.provider, pluginId: row.pluginId, defaultLeasePolicy: row.defaultLeasePolicy };
  const parsed = parsedConfig(row);
  const credential = parsed?.schema === "daytona" && parsed.result.success ? credentialView(parsed.result.data.apiKeyEnv, lookupEnv) : null;
  const secrets = keyLikeFields(row.config);
  if (secrets.length > 0) {
    return {
      ...base,
      credential,
      configuration: { kind: "withheld", fields: secrets, text: `not shown: it holds a key-like field (${secrets.join(", ")}); a key is never stored in an environment's configuration` },
    };
  }
  let configuration: EnvironmentConfigView;
  if (parsed === null) configuration = { kind: "unsupported", text: `not shown: no built-in provider of this instance reads the ${row.provider} provider's configuration` };
  else if (row.config !== undefined && row.config !== null && (typeof row.config !== "object" || Array.isArray(row.config))) configuration = { kind: "invalid", text: "invalid configuration: config: must be a JSON object" };
  else if (!parsed.result.success) configuration = invalid(parsed.result.error);
  else if (parsed.schema === "daytona") configuration = daytonaView(parsed.result.data as z.infer<typeof daytonaEnvironmentConfig>);
  else configuration = settings(parsed.result.data as Record<string, unknown>);
  return { ...base, configuration, credential };
}

/** The page's list, in the order given (the caller sorts by name). */
export function environmentsView(rows: readonly EnvironmentRow[], lookupEnv: (name: string) => string | undefined): EnvironmentView[] {
  return rows.map((row) => environmentView(row, lookupEnv));
}
