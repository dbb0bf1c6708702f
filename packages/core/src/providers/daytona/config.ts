// environments.config for the `daytona` provider (zod; parsed again at every acquisition, so a
// stored config that went bad is refused with its path instead of creating a wrong sandbox).
//
// The API key itself is never part of it: `apiKeyEnv` names the controller's environment
// variable that holds it (credentials.ts reads it at call time), so the key is never stored in
// the database, logged or shown. The name must start with DAYTONA_: an environment's config is
// written by board operators, and the variable's value is sent to `apiUrl` as a bearer token, so
// a config may not point another secret of the controller (DATABASE_URL...) at a server of its
// choice. For the same reason `apiUrl` must be https, except on a loopback host (the emulator).
import { z } from "zod";
import { DomainError } from "../../errors";

export const DEFAULT_DAYTONA_API_URL = "https://app.daytona.io/api";
export const DEFAULT_API_KEY_ENV = "DAYTONA_API_KEY";
/** Label keys copyback sets on each sandbox (acquire.ts); an environment's own labels may not use the prefix. */
export const RESERVED_LABEL_PREFIX = "copyback.";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

const apiUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname));
    } catch {
      return false;
    }
  }, "must be an https URL (http only on a loopback host)");

const minutes = z.number().int().min(0).max(525_600);
const labelKey = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$/, "a label key is 1-63 letters, digits, '.', '_', '/' or '-'")
  .refine((key) => !key.startsWith(RESERVED_LABEL_PREFIX), `label keys starting with ${RESERVED_LABEL_PREFIX} are copyback's own`);

export const daytonaEnvironmentConfig = z
  .object({
    apiUrl: apiUrl.default(DEFAULT_DAYTONA_API_URL),
    apiKeyEnv: z
      .string()
      .regex(/^DAYTONA_[A-Z0-9_]{1,100}$/, "must name an environment variable starting with DAYTONA_ (upper case, digits, _)")
      .default(DEFAULT_API_KEY_ENV),
    /** Daytona's target (region), e.g. "us" or "eu"; Daytona's default when absent. */
    target: z.string().regex(/^[a-z0-9-]{1,32}$/).optional(),
    /** Create from this snapshot (Daytona's default snapshot when neither it nor image is given). */
    snapshot: z.string().min(1).max(256).optional(),
    /** Or from this image (resources apply only to sandboxes created from an image, as in Daytona). */
    image: z.string().min(1).max(512).optional(),
    resources: z
      .strictObject({
        cpu: z.number().int().min(1).max(64).optional(),
        /** GiB */
        memory: z.number().int().min(1).max(512).optional(),
        /** GiB */
        disk: z.number().int().min(1).max(2048).optional(),
      })
      .optional(),
    labels: z.record(labelKey, z.string().max(255)).default({}),
    /** Daytona stops an idle sandbox after this many minutes (0: never). Daytona's default when absent. */
    autoStopMinutes: minutes.optional(),
    /** Daytona archives a stopped sandbox after this many minutes (0: Daytona's maximum). */
    autoArchiveMinutes: minutes.optional(),
    /**
     * Daytona deletes a stopped sandbox after this many minutes; absent: never. R-DT-1: copyback
     * disables it (and reads it back) before every stop that must keep the files.
     */
    autoDeleteMinutes: minutes.optional(),
  })
  .loose()
  .superRefine((config, ctx) => {
    if (config.snapshot !== undefined && config.image !== undefined) {
      ctx.addIssue({ code: "custom", path: ["image"], message: "give a snapshot or an image, not both" });
    }
    if (config.resources !== undefined && config.image === undefined) {
      ctx.addIssue({ code: "custom", path: ["resources"], message: "resources apply only to a sandbox created from an image" });
    }
    // The key is never stored: a config that carries one is refused before it reaches the database.
    for (const key of ["apiKey", "api_key", "key", "token", "jwtToken"]) {
      if (key in config) ctx.addIssue({ code: "custom", path: [key], message: "the API key is never stored; put the NAME of the environment variable that holds it in apiKeyEnv" });
    }
  });
export type DaytonaEnvironmentConfig = z.infer<typeof daytonaEnvironmentConfig>;

/** Throws provider_config_invalid naming each offending path (never echoing a value). */
export function parseDaytonaConfig(config: unknown): DaytonaEnvironmentConfig {
  const parsed = daytonaEnvironmentConfig.safeParse(config ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "config"}: ${i.message}`).join("; ");
    throw new DomainError("invalid", "provider_config_invalid", `The daytona environment's configuration is invalid: ${issues}.`);
  }
  return parsed.data;
}
