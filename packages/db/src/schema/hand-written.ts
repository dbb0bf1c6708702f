// Database objects that the migrations create by hand because Prisma's schema language cannot
// express them (without preview features). Prisma's diff does not know they are intended:
// triggers and functions are not introspected at all, and this engine version leaves a partial
// index that the schema does not declare alone; an engine that proposed to drop one would be
// stopped by `driftSteps`, which removes such drops. `migration:create` and the migrations test
// use this list; the test also checks that each object exists in a migrated database.

export interface HandWrittenIndex {
  name: string;
  table: string;
  /** Why Prisma cannot express it. */
  reason: string;
  /** Parts of pg_indexes.indexdef the test expects (PostgreSQL's normalized spelling). */
  definitionIncludes: string[];
}

export const HAND_WRITTEN_INDEXES: readonly HandWrittenIndex[] = [
  {
    // R-OWN-5: one open recovery action per company, issue, cause and fingerprint.
    name: "issue_recovery_actions_one_open_per_fingerprint",
    table: "issue_recovery_actions",
    reason: "partial unique index (WHERE status IN ('active', 'escalated'))",
    definitionIncludes: [
      "CREATE UNIQUE INDEX issue_recovery_actions_one_open_per_fingerprint ON public.issue_recovery_actions USING btree (company_id, issue_id, cause, fingerprint)",
      "WHERE (status = ANY (ARRAY['active'::recovery_status, 'escalated'::recovery_status]))",
    ],
  },
  {
    // One active ephemeral lease per environment and execution workspace;
    // acquireLease turns a violation into DomainError conflict `lease_busy`.
    name: "environment_leases_one_active_ephemeral",
    table: "environment_leases",
    reason: "partial unique index (WHERE status = 'active' AND lease_policy = 'ephemeral')",
    definitionIncludes: [
      "CREATE UNIQUE INDEX environment_leases_one_active_ephemeral ON public.environment_leases USING btree (environment_id, execution_workspace_id)",
      "WHERE ((status = 'active'::lease_status) AND (lease_policy = 'ephemeral'::lease_policy))",
    ],
  },
  {
    // Open recovery actions by cause (Recovery page, owner-hold sweeps).
    name: "issue_recovery_actions_open_by_cause",
    table: "issue_recovery_actions",
    reason: "partial index (WHERE status IN ('active', 'escalated'))",
    definitionIncludes: [
      "CREATE INDEX issue_recovery_actions_open_by_cause ON public.issue_recovery_actions USING btree (cause, company_id, created_at)",
      "WHERE (status = ANY (ARRAY['active'::recovery_status, 'escalated'::recovery_status]))",
    ],
  },
  {
    // The reuse of a released lease leaves out leases an open action names.
    name: "issue_recovery_actions_open_by_lease",
    table: "issue_recovery_actions",
    reason: "partial index (WHERE status IN ('active', 'escalated') AND lease_id IS NOT NULL)",
    definitionIncludes: [
      "CREATE INDEX issue_recovery_actions_open_by_lease ON public.issue_recovery_actions USING btree (lease_id)",
      "WHERE ((status = ANY (ARRAY['active'::recovery_status, 'escalated'::recovery_status])) AND (lease_id IS NOT NULL))",
    ],
  },
  {
    // The same reuse also leaves out leases named in an open action's evidence (`leaseIds`).
    name: "issue_recovery_actions_open_lease_ids",
    table: "issue_recovery_actions",
    reason: "partial GIN expression index (evidence -> 'leaseIds' jsonb_path_ops, WHERE status IN ('active', 'escalated'))",
    definitionIncludes: [
      "CREATE INDEX issue_recovery_actions_open_lease_ids ON public.issue_recovery_actions USING gin (((evidence -> 'leaseIds'::text)) jsonb_path_ops)",
      "WHERE (status = ANY (ARRAY['active'::recovery_status, 'escalated'::recovery_status]))",
    ],
  },
  {
    // R-EX-5: the cleanup sweep never takes over an allocation another unsettled lease claims.
    name: "environment_leases_unsettled_allocation",
    table: "environment_leases",
    reason: "partial index (WHERE provider_lease_id IS NOT NULL AND status IN ('active', 'pending_cleanup', 'released'))",
    definitionIncludes: [
      "CREATE INDEX environment_leases_unsettled_allocation ON public.environment_leases USING btree (plugin_id, provider_lease_id)",
      "WHERE ((provider_lease_id IS NOT NULL) AND (status = ANY (ARRAY['active'::lease_status, 'pending_cleanup'::lease_status, 'released'::lease_status])))",
    ],
  },
  {
    // The cleanup sweep's due selection (pending_cleanup leases by next_cleanup_at).
    name: "environment_leases_cleanup_due",
    table: "environment_leases",
    reason: "partial index (WHERE status = 'pending_cleanup')",
    definitionIncludes: [
      "CREATE INDEX environment_leases_cleanup_due ON public.environment_leases USING btree (next_cleanup_at NULLS FIRST, id)",
      "WHERE (status = 'pending_cleanup'::lease_status)",
    ],
  },
  {
    // The lease cleanup sweep's resumption of unfinished Discards (leases with a discard intent, not destroyed).
    name: "environment_leases_discard_due",
    table: "environment_leases",
    reason: "partial index (WHERE status <> 'destroyed' AND jsonb_typeof(metadata -> 'sandboxDiscard') = 'object')",
    definitionIncludes: [
      "CREATE INDEX environment_leases_discard_due ON public.environment_leases USING btree (next_cleanup_at NULLS FIRST, id)",
      "WHERE ((status <> 'destroyed'::lease_status) AND (jsonb_typeof((metadata -> 'sandboxDiscard'::text)) = 'object'::text))",
    ],
  },
  {
    // R-UA-5: the historical unsafe export sweep's due selection.
    name: "native_run_finalizations_historical_unsafe",
    table: "native_run_finalizations",
    reason: "partial index (WHERE phase = 'terminal_failure' AND failure_code = 'native_workspace_sync_out_unsafe_archive')",
    definitionIncludes: [
      "CREATE INDEX native_run_finalizations_historical_unsafe ON public.native_run_finalizations USING btree (company_id, updated_at, run_id)",
      "WHERE ((phase = 'terminal_failure'::finalization_phase) AND (failure_code = 'native_workspace_sync_out_unsafe_archive'::text))",
    ],
  },
  {
    // R-RC-7: acknowledged cancellations that missed the pin (the stop-retention sweep).
    name: "heartbeat_runs_stop_retention_due",
    table: "heartbeat_runs",
    reason: "partial index (WHERE status = 'cancelled' AND runner_profile_json ? 'stopAcknowledgement' AND NOT runner_profile_json ? 'stopRetention')",
    definitionIncludes: [
      "CREATE INDEX heartbeat_runs_stop_retention_due ON public.heartbeat_runs USING btree (finished_at NULLS FIRST, id)",
      "WHERE ((status = 'cancelled'::run_status) AND (runner_profile_json ? 'stopAcknowledgement'::text) AND (NOT (runner_profile_json ? 'stopRetention'::text)))",
    ],
  },
  {
    // R-RC-5: pending reconstruction intents (the reconstruction delivery sweep).
    name: "reconstruction_intents_pending",
    table: "reconstruction_intents",
    reason: "partial index (WHERE status = 'pending')",
    definitionIncludes: [
      "CREATE INDEX reconstruction_intents_pending ON public.reconstruction_intents USING btree (created_at, id)",
      "WHERE (status = 'pending'::reconstruction_intent_status)",
    ],
  },
];

export interface HandWrittenTrigger {
  name: string;
  table: string;
  reason: string;
}

export const HAND_WRITTEN_TRIGGERS: readonly HandWrittenTrigger[] = [
  {
    name: "native_run_results_immutable",
    table: "native_run_results",
    reason: "results are immutable evidence: UPDATE and DELETE are rejected",
  },
];

/** One step of the engine's migration script: its `-- Header` comment and its SQL. */
export interface MigrationStep {
  header: string;
  sql: string;
}

/**
 * Splits a script the engine generated into its steps. The engine writes each step as a
 * `-- StepKind` line followed by SQL, steps separated by blank lines.
 */
export function splitMigrationSteps(script: string): MigrationStep[] {
  const steps: MigrationStep[] = [];
  for (const chunk of script.split(/\n(?=-- [A-Za-z]+\n)/)) {
    const trimmed = chunk.trim();
    if (trimmed === "" || trimmed === "-- This is an empty migration.") continue;
    const match = /^-- ([A-Za-z]+)\n([\s\S]*)$/.exec(trimmed);
    steps.push(
      match
        ? { header: match[1] ?? "", sql: (match[2] ?? "").trim() }
        : { header: "", sql: trimmed },
    );
  }
  return steps;
}

function isDropOfHandWrittenIndex(step: MigrationStep): boolean {
  return HAND_WRITTEN_INDEXES.some((index) => step.sql === `DROP INDEX "${index.name}";`);
}

/** The steps of a database-to-schema diff that are real drift (hand-written objects removed). */
export function driftSteps(script: string): MigrationStep[] {
  return splitMigrationSteps(script).filter((step) => !isDropOfHandWrittenIndex(step));
}

export function joinMigrationSteps(steps: readonly MigrationStep[]): string {
  return steps
    .map((step) => (step.header ? `-- ${step.header}\n${step.sql}\n` : `${step.sql}\n`))
    .join("\n");
}
