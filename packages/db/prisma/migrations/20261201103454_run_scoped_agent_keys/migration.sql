-- AlterTable
ALTER TABLE "agent_api_keys" ADD COLUMN     "run_id" UUID;

-- CreateIndex
CREATE INDEX "agent_api_keys_run_id_idx" ON "agent_api_keys"("run_id");

-- AddForeignKey
ALTER TABLE "agent_api_keys" ADD CONSTRAINT "agent_api_keys_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "heartbeat_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Run-scoped agent keys end with their run (issue 13, section 2): whatever ends it - the worker's
-- commit or failure, a cancellation, the reconciler's orphan sweep, an operator - the same
-- statement that moves the run out of `running` revokes its keys. The web app also accepts such
-- a key only while its run is running, so this is the durable record rather than the only fence.
CREATE FUNCTION "agent_api_keys_revoke_with_run"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "agent_api_keys" SET "revoked_at" = now() WHERE "run_id" = NEW."id" AND "revoked_at" IS NULL;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "heartbeat_runs_revoke_agent_keys"
AFTER UPDATE OF "status" ON "heartbeat_runs"
FOR EACH ROW
WHEN (NEW."status" IS DISTINCT FROM OLD."status" AND NEW."status" <> 'running')
EXECUTE FUNCTION "agent_api_keys_revoke_with_run"();
