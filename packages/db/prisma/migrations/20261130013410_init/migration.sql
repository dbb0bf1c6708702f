-- CreateEnum
CREATE TYPE "membership_role" AS ENUM ('owner', 'admin', 'runtime_manager', 'member');

-- CreateEnum
CREATE TYPE "membership_status" AS ENUM ('active', 'suspended');

-- CreateEnum
CREATE TYPE "issue_status" AS ENUM ('backlog', 'todo', 'in_progress', 'in_review', 'blocked', 'done', 'cancelled');

-- CreateEnum
CREATE TYPE "run_status" AS ENUM ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out');

-- CreateEnum
CREATE TYPE "runtime_mode" AS ENUM ('native', 'legacy');

-- CreateEnum
CREATE TYPE "finalization_phase" AS ENUM ('observed', 'result_accepted', 'workspace_finalizing', 'arbitrating', 'committed', 'retryable_failure', 'terminal_failure');

-- CreateEnum
CREATE TYPE "result_schema_status" AS ENUM ('accepted', 'rejected');

-- CreateEnum
CREATE TYPE "workspace_operation_phase" AS ENUM ('workspace_prepare', 'workspace_restore', 'workspace_finalize');

-- CreateEnum
CREATE TYPE "workspace_operation_status" AS ENUM ('running', 'succeeded', 'failed');

-- CreateEnum
CREATE TYPE "environment_provider" AS ENUM ('local', 'fake', 'daytona', 'railway');

-- CreateEnum
CREATE TYPE "lease_policy" AS ENUM ('ephemeral', 'reuse_by_environment', 'retain_on_failure');

-- CreateEnum
CREATE TYPE "lease_status" AS ENUM ('active', 'released', 'pending_cleanup', 'destroyed', 'failed');

-- CreateEnum
CREATE TYPE "recovery_owner_type" AS ENUM ('board', 'agent', 'system');

-- CreateEnum
CREATE TYPE "recovery_status" AS ENUM ('active', 'escalated', 'resolved', 'cancelled');

-- CreateEnum
CREATE TYPE "actor_type" AS ENUM ('user', 'agent', 'local_board', 'system');

-- CreateEnum
CREATE TYPE "run_event_level" AS ENUM ('debug', 'info', 'warn', 'error');

-- CreateEnum
CREATE TYPE "reconstruction_intent_status" AS ENUM ('pending', 'delivered', 'cancelled');

-- CreateTable
CREATE TABLE "companies" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "issue_prefix" TEXT NOT NULL,
    "issue_counter" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "companies_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "email_verified" BOOLEAN NOT NULL DEFAULT false,
    "image" TEXT,
    "is_instance_admin" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "auth_sessions" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "token" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "ip_address" TEXT,
    "user_agent" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "auth_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "auth_accounts" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "account_id" TEXT NOT NULL,
    "provider_id" TEXT NOT NULL,
    "access_token" TEXT,
    "refresh_token" TEXT,
    "id_token" TEXT,
    "access_token_expires_at" TIMESTAMPTZ(3),
    "refresh_token_expires_at" TIMESTAMPTZ(3),
    "scope" TEXT,
    "password" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "auth_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "auth_verifications" (
    "id" UUID NOT NULL,
    "identifier" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "auth_verifications_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "company_memberships" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "role" "membership_role" NOT NULL,
    "status" "membership_status" NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "company_memberships_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "board_api_keys" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "key_prefix" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "last_used_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "board_api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_api_keys" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "agent_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "key_prefix" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "last_used_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agent_api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agents" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "command" TEXT[],
    "adapter_config" JSONB NOT NULL DEFAULT '{}',
    "environment_id" UUID,
    "archived_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "environments" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "provider" "environment_provider" NOT NULL,
    "plugin_id" TEXT NOT NULL,
    "config" JSONB NOT NULL DEFAULT '{}',
    "default_lease_policy" "lease_policy" NOT NULL DEFAULT 'ephemeral',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "environments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "execution_workspaces" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "host_path" TEXT NOT NULL,
    "excluded_paths" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "execution_workspaces_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "issues" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "number" INTEGER NOT NULL,
    "identifier" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "status" "issue_status" NOT NULL DEFAULT 'backlog',
    "status_version" INTEGER NOT NULL DEFAULT 0,
    "conversation_generation" INTEGER NOT NULL DEFAULT 0,
    "assignee_agent_id" UUID,
    "execution_run_id" UUID,
    "checkout_run_id" UUID,
    "execution_workspace_id" UUID,
    "created_by_user_id" UUID,
    "last_activity_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "issues_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "issue_messages" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "issue_id" UUID NOT NULL,
    "author_type" "actor_type" NOT NULL,
    "author_user_id" UUID,
    "author_agent_id" UUID,
    "run_id" UUID,
    "body" TEXT NOT NULL,
    "conversation_generation" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "issue_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "issue_attachments" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "issue_id" UUID NOT NULL,
    "message_id" UUID,
    "file_name" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "size_bytes" BIGINT NOT NULL,
    "sha256" TEXT NOT NULL,
    "storage_path" TEXT NOT NULL,
    "uploaded_by_user_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "issue_attachments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "heartbeat_runs" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "agent_id" UUID NOT NULL,
    "native_issue_id" UUID NOT NULL,
    "runtime_mode" "runtime_mode" NOT NULL DEFAULT 'native',
    "status" "run_status" NOT NULL DEFAULT 'queued',
    "native_phase" TEXT,
    "runner_profile_json" JSONB NOT NULL DEFAULT '{}',
    "result_json" JSONB,
    "controller_pid" INTEGER,
    "controller_process_start" TEXT,
    "controller_boot_id" TEXT,
    "controller_host" TEXT,
    "predecessor_run_id" UUID,
    "wake_reason" TEXT,
    "error_code" TEXT,
    "error_message" TEXT,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "heartbeat_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "native_run_finalizations" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "issue_id" UUID NOT NULL,
    "phase" "finalization_phase" NOT NULL DEFAULT 'observed',
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "result_id" UUID,
    "failure_code" TEXT,
    "failure_detail" JSONB,
    "next_attempt_at" TIMESTAMPTZ(3),
    "committed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "native_run_finalizations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "native_run_results" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "issue_id" UUID NOT NULL,
    "agent_id" UUID NOT NULL,
    "schema_status" "result_schema_status" NOT NULL,
    "payload" JSONB NOT NULL,
    "canonical_sha256" TEXT NOT NULL,
    "dedupe_key" TEXT NOT NULL,
    "rejection_code" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "native_run_results_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspace_operations" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "issue_id" UUID NOT NULL,
    "phase" "workspace_operation_phase" NOT NULL,
    "status" "workspace_operation_status" NOT NULL DEFAULT 'running',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "error_code" TEXT,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workspace_operations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "environment_leases" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "environment_id" UUID NOT NULL,
    "execution_workspace_id" UUID,
    "run_id" UUID,
    "issue_id" UUID,
    "provider" "environment_provider" NOT NULL,
    "plugin_id" TEXT NOT NULL,
    "provider_lease_id" TEXT,
    "lease_policy" "lease_policy" NOT NULL,
    "status" "lease_status" NOT NULL DEFAULT 'active',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "acquired_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "released_at" TIMESTAMPTZ(3),
    "cleanup_claimed_by" TEXT,
    "cleanup_claimed_until" TIMESTAMPTZ(3),
    "cleanup_attempts" INTEGER NOT NULL DEFAULT 0,
    "next_cleanup_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "environment_leases_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "issue_recovery_actions" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "issue_id" UUID NOT NULL,
    "run_id" UUID,
    "lease_id" UUID,
    "cause" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "owner_type" "recovery_owner_type" NOT NULL,
    "status" "recovery_status" NOT NULL DEFAULT 'active',
    "evidence" JSONB NOT NULL DEFAULT '{}',
    "next_action" TEXT,
    "wake_policy" JSONB NOT NULL DEFAULT '{}',
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER,
    "outcome" TEXT,
    "resolved_at" TIMESTAMPTZ(3),
    "resolved_by_type" "actor_type",
    "resolved_by_user_id" UUID,
    "resolution_note" TEXT,
    "resolution_evidence" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "issue_recovery_actions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "activity_log" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "actor_type" "actor_type" NOT NULL,
    "actor_id" UUID,
    "action" TEXT NOT NULL,
    "entity_type" TEXT NOT NULL,
    "entity_id" UUID,
    "details" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "activity_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "run_events" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "level" "run_event_level" NOT NULL,
    "code" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reconstruction_intents" (
    "id" UUID NOT NULL,
    "company_id" UUID NOT NULL,
    "issue_id" UUID NOT NULL,
    "source_run_id" UUID NOT NULL,
    "recovery_action_id" UUID NOT NULL,
    "lease_id" UUID NOT NULL,
    "status" "reconstruction_intent_status" NOT NULL DEFAULT 'pending',
    "attachment_hashes" JSONB NOT NULL,
    "description" TEXT NOT NULL,
    "external_action_outcomes" JSONB NOT NULL,
    "source_status_version" INTEGER NOT NULL,
    "request_id" TEXT NOT NULL,
    "delivered_run_id" UUID,
    "created_by_user_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reconstruction_intents_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

-- CreateIndex
CREATE UNIQUE INDEX "auth_sessions_token_key" ON "auth_sessions"("token");

-- CreateIndex
CREATE INDEX "auth_sessions_user_id_idx" ON "auth_sessions"("user_id");

-- CreateIndex
CREATE INDEX "auth_accounts_user_id_idx" ON "auth_accounts"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "auth_accounts_provider_id_account_id_key" ON "auth_accounts"("provider_id", "account_id");

-- CreateIndex
CREATE INDEX "auth_verifications_identifier_idx" ON "auth_verifications"("identifier");

-- CreateIndex
CREATE INDEX "company_memberships_user_id_idx" ON "company_memberships"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "company_memberships_company_id_user_id_key" ON "company_memberships"("company_id", "user_id");

-- CreateIndex
CREATE UNIQUE INDEX "board_api_keys_key_hash_key" ON "board_api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "board_api_keys_company_id_idx" ON "board_api_keys"("company_id");

-- CreateIndex
CREATE UNIQUE INDEX "agent_api_keys_key_hash_key" ON "agent_api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "agent_api_keys_company_id_agent_id_idx" ON "agent_api_keys"("company_id", "agent_id");

-- CreateIndex
CREATE UNIQUE INDEX "agents_company_id_name_key" ON "agents"("company_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "environments_company_id_name_key" ON "environments"("company_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "execution_workspaces_company_id_name_key" ON "execution_workspaces"("company_id", "name");

-- CreateIndex
CREATE INDEX "issues_company_id_status_idx" ON "issues"("company_id", "status");

-- CreateIndex
CREATE INDEX "issues_company_id_assignee_agent_id_idx" ON "issues"("company_id", "assignee_agent_id");

-- CreateIndex
CREATE INDEX "issues_company_id_last_activity_at_idx" ON "issues"("company_id", "last_activity_at");

-- CreateIndex
CREATE UNIQUE INDEX "issues_company_id_identifier_key" ON "issues"("company_id", "identifier");

-- CreateIndex
CREATE UNIQUE INDEX "issues_company_id_number_key" ON "issues"("company_id", "number");

-- CreateIndex
CREATE INDEX "issue_messages_issue_id_created_at_idx" ON "issue_messages"("issue_id", "created_at");

-- CreateIndex
CREATE INDEX "issue_attachments_company_id_issue_id_idx" ON "issue_attachments"("company_id", "issue_id");

-- CreateIndex
CREATE INDEX "heartbeat_runs_company_id_native_issue_id_idx" ON "heartbeat_runs"("company_id", "native_issue_id");

-- CreateIndex
CREATE INDEX "heartbeat_runs_status_created_at_idx" ON "heartbeat_runs"("status", "created_at");

-- CreateIndex
CREATE INDEX "heartbeat_runs_agent_id_status_idx" ON "heartbeat_runs"("agent_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "native_run_finalizations_run_id_key" ON "native_run_finalizations"("run_id");

-- CreateIndex
CREATE INDEX "native_run_finalizations_phase_next_attempt_at_idx" ON "native_run_finalizations"("phase", "next_attempt_at");

-- CreateIndex
CREATE INDEX "native_run_results_company_id_issue_id_idx" ON "native_run_results"("company_id", "issue_id");

-- CreateIndex
CREATE UNIQUE INDEX "native_run_results_run_id_dedupe_key_key" ON "native_run_results"("run_id", "dedupe_key");

-- CreateIndex
CREATE INDEX "workspace_operations_company_id_run_id_issue_id_phase_statu_idx" ON "workspace_operations"("company_id", "run_id", "issue_id", "phase", "status");

-- CreateIndex
CREATE INDEX "environment_leases_status_next_cleanup_at_idx" ON "environment_leases"("status", "next_cleanup_at");

-- CreateIndex
CREATE INDEX "environment_leases_company_id_run_id_idx" ON "environment_leases"("company_id", "run_id");

-- CreateIndex
CREATE INDEX "environment_leases_environment_id_status_idx" ON "environment_leases"("environment_id", "status");

-- CreateIndex
CREATE INDEX "issue_recovery_actions_company_id_issue_id_status_idx" ON "issue_recovery_actions"("company_id", "issue_id", "status");

-- CreateIndex
CREATE INDEX "issue_recovery_actions_run_id_idx" ON "issue_recovery_actions"("run_id");

-- CreateIndex
CREATE INDEX "activity_log_company_id_created_at_idx" ON "activity_log"("company_id", "created_at");

-- CreateIndex
CREATE INDEX "activity_log_company_id_entity_type_entity_id_idx" ON "activity_log"("company_id", "entity_type", "entity_id");

-- CreateIndex
CREATE INDEX "run_events_run_id_created_at_idx" ON "run_events"("run_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "reconstruction_intents_recovery_action_id_key" ON "reconstruction_intents"("recovery_action_id");

-- CreateIndex
CREATE INDEX "reconstruction_intents_company_id_issue_id_idx" ON "reconstruction_intents"("company_id", "issue_id");

-- AddForeignKey
ALTER TABLE "auth_sessions" ADD CONSTRAINT "auth_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "auth_accounts" ADD CONSTRAINT "auth_accounts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "company_memberships" ADD CONSTRAINT "company_memberships_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "company_memberships" ADD CONSTRAINT "company_memberships_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "board_api_keys" ADD CONSTRAINT "board_api_keys_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "board_api_keys" ADD CONSTRAINT "board_api_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_api_keys" ADD CONSTRAINT "agent_api_keys_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_api_keys" ADD CONSTRAINT "agent_api_keys_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_environment_id_fkey" FOREIGN KEY ("environment_id") REFERENCES "environments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "environments" ADD CONSTRAINT "environments_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "execution_workspaces" ADD CONSTRAINT "execution_workspaces_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issues" ADD CONSTRAINT "issues_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issues" ADD CONSTRAINT "issues_assignee_agent_id_fkey" FOREIGN KEY ("assignee_agent_id") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issues" ADD CONSTRAINT "issues_execution_run_id_fkey" FOREIGN KEY ("execution_run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issues" ADD CONSTRAINT "issues_checkout_run_id_fkey" FOREIGN KEY ("checkout_run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issues" ADD CONSTRAINT "issues_execution_workspace_id_fkey" FOREIGN KEY ("execution_workspace_id") REFERENCES "execution_workspaces"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issues" ADD CONSTRAINT "issues_created_by_user_id_fkey" FOREIGN KEY ("created_by_user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_messages" ADD CONSTRAINT "issue_messages_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_messages" ADD CONSTRAINT "issue_messages_issue_id_fkey" FOREIGN KEY ("issue_id") REFERENCES "issues"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_messages" ADD CONSTRAINT "issue_messages_author_user_id_fkey" FOREIGN KEY ("author_user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_messages" ADD CONSTRAINT "issue_messages_author_agent_id_fkey" FOREIGN KEY ("author_agent_id") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_messages" ADD CONSTRAINT "issue_messages_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_attachments" ADD CONSTRAINT "issue_attachments_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_attachments" ADD CONSTRAINT "issue_attachments_issue_id_fkey" FOREIGN KEY ("issue_id") REFERENCES "issues"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_attachments" ADD CONSTRAINT "issue_attachments_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "issue_messages"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_attachments" ADD CONSTRAINT "issue_attachments_uploaded_by_user_id_fkey" FOREIGN KEY ("uploaded_by_user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "heartbeat_runs" ADD CONSTRAINT "heartbeat_runs_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "heartbeat_runs" ADD CONSTRAINT "heartbeat_runs_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "heartbeat_runs" ADD CONSTRAINT "heartbeat_runs_native_issue_id_fkey" FOREIGN KEY ("native_issue_id") REFERENCES "issues"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "heartbeat_runs" ADD CONSTRAINT "heartbeat_runs_predecessor_run_id_fkey" FOREIGN KEY ("predecessor_run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "native_run_finalizations" ADD CONSTRAINT "native_run_finalizations_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "native_run_finalizations" ADD CONSTRAINT "native_run_finalizations_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "native_run_finalizations" ADD CONSTRAINT "native_run_finalizations_issue_id_fkey" FOREIGN KEY ("issue_id") REFERENCES "issues"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "native_run_finalizations" ADD CONSTRAINT "native_run_finalizations_result_id_fkey" FOREIGN KEY ("result_id") REFERENCES "native_run_results"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "native_run_results" ADD CONSTRAINT "native_run_results_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "native_run_results" ADD CONSTRAINT "native_run_results_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "native_run_results" ADD CONSTRAINT "native_run_results_issue_id_fkey" FOREIGN KEY ("issue_id") REFERENCES "issues"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "native_run_results" ADD CONSTRAINT "native_run_results_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_operations" ADD CONSTRAINT "workspace_operations_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_operations" ADD CONSTRAINT "workspace_operations_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_operations" ADD CONSTRAINT "workspace_operations_issue_id_fkey" FOREIGN KEY ("issue_id") REFERENCES "issues"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "environment_leases" ADD CONSTRAINT "environment_leases_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "environment_leases" ADD CONSTRAINT "environment_leases_environment_id_fkey" FOREIGN KEY ("environment_id") REFERENCES "environments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "environment_leases" ADD CONSTRAINT "environment_leases_execution_workspace_id_fkey" FOREIGN KEY ("execution_workspace_id") REFERENCES "execution_workspaces"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "environment_leases" ADD CONSTRAINT "environment_leases_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "environment_leases" ADD CONSTRAINT "environment_leases_issue_id_fkey" FOREIGN KEY ("issue_id") REFERENCES "issues"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_recovery_actions" ADD CONSTRAINT "issue_recovery_actions_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_recovery_actions" ADD CONSTRAINT "issue_recovery_actions_issue_id_fkey" FOREIGN KEY ("issue_id") REFERENCES "issues"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_recovery_actions" ADD CONSTRAINT "issue_recovery_actions_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_recovery_actions" ADD CONSTRAINT "issue_recovery_actions_lease_id_fkey" FOREIGN KEY ("lease_id") REFERENCES "environment_leases"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issue_recovery_actions" ADD CONSTRAINT "issue_recovery_actions_resolved_by_user_id_fkey" FOREIGN KEY ("resolved_by_user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "activity_log" ADD CONSTRAINT "activity_log_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reconstruction_intents" ADD CONSTRAINT "reconstruction_intents_company_id_fkey" FOREIGN KEY ("company_id") REFERENCES "companies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reconstruction_intents" ADD CONSTRAINT "reconstruction_intents_issue_id_fkey" FOREIGN KEY ("issue_id") REFERENCES "issues"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reconstruction_intents" ADD CONSTRAINT "reconstruction_intents_source_run_id_fkey" FOREIGN KEY ("source_run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reconstruction_intents" ADD CONSTRAINT "reconstruction_intents_delivered_run_id_fkey" FOREIGN KEY ("delivered_run_id") REFERENCES "heartbeat_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reconstruction_intents" ADD CONSTRAINT "reconstruction_intents_recovery_action_id_fkey" FOREIGN KEY ("recovery_action_id") REFERENCES "issue_recovery_actions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reconstruction_intents" ADD CONSTRAINT "reconstruction_intents_lease_id_fkey" FOREIGN KEY ("lease_id") REFERENCES "environment_leases"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reconstruction_intents" ADD CONSTRAINT "reconstruction_intents_created_by_user_id_fkey" FOREIGN KEY ("created_by_user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- ---------------------------------------------------------------------------------------------
-- Written by hand below this line: objects Prisma's schema language cannot express.
-- They are listed in src/schema/hand-written.ts, which the migrations test and
-- `migration:create` use to tell them from drift. Keep the two in step.
-- ---------------------------------------------------------------------------------------------

-- CreateIndex (hand-written, partial): R-OWN-5, one open recovery action per company, issue,
-- cause and fingerprint. "Open" means active or escalated: resolved and cancelled actions
-- stay as history and never block a new one.
CREATE UNIQUE INDEX "issue_recovery_actions_one_open_per_fingerprint"
    ON "issue_recovery_actions" ("company_id", "issue_id", "cause", "fingerprint")
    WHERE "status" IN ('active', 'escalated');

-- CreateTrigger (hand-written): native_run_results rows are immutable evidence. An accepted
-- result is reused by every later finalization attempt, so nothing may rewrite or remove it.
CREATE FUNCTION "native_run_results_reject_change"() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'native_run_results rows are immutable (% on id %)', TG_OP, OLD.id
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER "native_run_results_immutable"
    BEFORE UPDATE OR DELETE ON "native_run_results"
    FOR EACH ROW EXECUTE FUNCTION "native_run_results_reject_change"();
