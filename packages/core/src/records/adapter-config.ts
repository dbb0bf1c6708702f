// agents.adapter_config, parsed at the boundary (zod for every JSON read from the database).
// Unknown keys are kept (later adapters add settings) but never interpreted here.
import { z } from "zod";

/** Variables the executor sets itself; an agent's configuration cannot override them. */
export const RESERVED_AGENT_ENV = ["COPYBACK_RUN_ID", "COPYBACK_ISSUE_ID", "COPYBACK_API_URL", "COPYBACK_RESULT_FILE", "COPYBACK_AGENT_PACK_DIR"] as const;

export const DEFAULT_AGENT_TIMEOUT_SECONDS = 600;

/**
 * The agent adapter: `process` (the default) finalizes through the native copyback coordinator;
 * `legacy` is the older protocol: at the end of its turn the controller restores the required
 * workspace files itself, through the directory-merge lock, without the coordinator (R-RR-1,
 * R-RR-2; dispatch/legacy-copyback.ts). A legacy agent's runs are `runtime_mode = 'legacy'`.
 */
export const AGENT_ADAPTERS = ["process", "legacy"] as const;
export type AgentAdapter = (typeof AGENT_ADAPTERS)[number];

/**
 * R-PV-1: the agent pack this agent runs from (providers/agent-pack/pack-format.ts): a directory on
 * the controller's host, the runtime version the agent needs, and optionally the pack's tree digest
 * pinned by the operator. Placed and verified in the sandbox before every turn. Absent: the agent's
 * command runs as configured, with no pack (the packages README says why that is the default).
 */
export const agentPackConfig = z.strictObject({
  directory: z.string().min(1).max(4096).refine((path) => path.startsWith("/"), "an absolute path on the controller's host"),
  version: z.string().trim().min(1).max(200),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, "a lowercase hex sha256 digest")
    .optional(),
});
export type AgentPackConfig = z.infer<typeof agentPackConfig>;

export const agentAdapterConfig = z.looseObject({
  adapter: z.enum(AGENT_ADAPTERS).default("process"),
  timeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(24 * 3600)
    .default(DEFAULT_AGENT_TIMEOUT_SECONDS),
  env: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name"), z.string().max(32 * 1024))
    .refine((env) => !RESERVED_AGENT_ENV.some((name) => name in env), {
      message: `may not set ${RESERVED_AGENT_ENV.join(", ")}`,
    })
    .default({}),
  agentPack: agentPackConfig.optional(),
});

export type AgentAdapterConfig = z.infer<typeof agentAdapterConfig>;

/** The runtime mode of a new run of an agent with these settings (unreadable settings: native, refused at dispatch). */
export function runtimeModeOfAdapter(adapterConfig: unknown): "native" | "legacy" {
  const parsed = agentAdapterConfig.safeParse(adapterConfig);
  return parsed.success && parsed.data.adapter === "legacy" ? "legacy" : "native";
}
