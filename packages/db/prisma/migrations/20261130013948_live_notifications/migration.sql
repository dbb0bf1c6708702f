-- Live updates of the console (issue 3 item 6). Written by hand: Prisma's schema language has
-- no triggers, so `migration:create` finds nothing to diff and the schema stays as it is.
--
-- Every committed change to a row the console shows is announced on the channel
-- `copyback_events`, whoever wrote it: the web app, the worker, a script or raw SQL. NOTIFY is
-- transactional: listeners hear it at commit, never for a rolled-back change. The payload holds
-- ids only, never content (titles, message bodies, evidence), so it stays far below NOTIFY's
-- 8000-byte limit and a listener must read the rows through the authorized API.
--   {"companyId": uuid, "entity": table name, "id": uuid, "issueId": uuid|null,
--    "runId": uuid|null, "op": "INSERT"|"UPDATE"|"DELETE"}
-- Keep in sync with packages/db/src/notify/live-event.ts and notify/triggers.ts.

CREATE FUNCTION "copyback_notify_live_change"() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    changed record;
    issue uuid;
    run uuid;
BEGIN
    IF TG_OP = 'DELETE' THEN
        changed := OLD;
    ELSE
        changed := NEW;
    END IF;
    -- An UPDATE that changes nothing (a worker re-writing the same values) is not news.
    IF TG_OP = 'UPDATE' AND OLD IS NOT DISTINCT FROM NEW THEN
        RETURN NULL;
    END IF;

    -- Which issue and run the change belongs to, so that pages can refresh just those.
    -- Each branch reads only columns its table has (fields of a record resolve at run time).
    IF TG_TABLE_NAME = 'issues' THEN
        issue := changed.id;
    ELSIF TG_TABLE_NAME IN ('issue_messages', 'issue_recovery_actions') THEN
        issue := changed.issue_id;
        run := changed.run_id;
    ELSIF TG_TABLE_NAME = 'heartbeat_runs' THEN
        issue := changed.native_issue_id;
        run := changed.id;
    ELSIF TG_TABLE_NAME = 'run_events' THEN
        run := changed.run_id;
        SELECT "native_issue_id" INTO issue FROM "heartbeat_runs" WHERE "id" = changed.run_id;
    ELSIF TG_TABLE_NAME = 'activity_log' THEN
        IF changed.entity_type = 'issue' THEN
            issue := changed.entity_id;
        ELSIF changed.entity_type IN ('run', 'heartbeat_run') THEN
            run := changed.entity_id;
        END IF;
    END IF;

    PERFORM pg_notify('copyback_events', json_build_object(
        'companyId', changed.company_id,
        'entity', TG_TABLE_NAME,
        'id', changed.id,
        'issueId', issue,
        'runId', run,
        'op', TG_OP
    )::text);
    RETURN NULL;
END;
$$;

CREATE TRIGGER "issues_live_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "issues"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_live_change"();

CREATE TRIGGER "issue_messages_live_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "issue_messages"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_live_change"();

CREATE TRIGGER "heartbeat_runs_live_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "heartbeat_runs"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_live_change"();

CREATE TRIGGER "issue_recovery_actions_live_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "issue_recovery_actions"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_live_change"();

CREATE TRIGGER "run_events_live_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "run_events"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_live_change"();

CREATE TRIGGER "activity_log_live_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "activity_log"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_live_change"();
