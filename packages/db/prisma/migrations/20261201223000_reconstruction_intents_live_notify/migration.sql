-- Live updates of "Continue from saved sources" (R-RC-3, R-RC-5, R-UI-3). Recording an intent,
-- delivering it and cancelling it after a refused delivery change `reconstruction_intents`, which
-- no trigger announced: another manager's open task page kept offering the form, and the task's
-- notice (core's deriveTaskNotice reads the intent's status) kept its old words. Written by hand
-- like `live_notifications` (Prisma's schema language has no triggers); an applied migration is
-- never edited, so the function is replaced here with one more branch, the issue and run of an
-- intent (its table has `source_run_id`, not `run_id`). Everything else is as it was. The payload
-- and its parser: packages/db/src/notify/live-event.ts (entity `reconstruction_intents`); the
-- browser's invalidation: apps/web/src/components/live/live-invalidation.ts.

CREATE OR REPLACE FUNCTION "copyback_notify_live_change"() RETURNS trigger
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
    ELSIF TG_TABLE_NAME = 'reconstruction_intents' THEN
        -- The hold's run (the source run the intent continues from), as for its recovery action.
        issue := changed.issue_id;
        run := changed.source_run_id;
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

CREATE TRIGGER "reconstruction_intents_live_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "reconstruction_intents"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_live_change"();
