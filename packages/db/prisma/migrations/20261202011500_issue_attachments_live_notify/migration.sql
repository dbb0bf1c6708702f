-- Live updates of task attachments (R-RC-3 sources, R-UI-3 "Continue from saved sources"). An
-- upload (POST /api/issues/:id/attachments, the task page's Attachments section) inserts an
-- `issue_attachments` row, which no trigger announced: another viewer's open task page kept its
-- old Attachments list, and an open "Continue from saved sources" form (the offer lists the task's
-- attachments) kept offering only the old ones, until a reload. The `activity_log` entry written
-- with the row names the issue too, but its invalidation is the activity feed's, and a row written
-- by anything other than core's storeAttachment would have no entry at all. Written by hand like
-- `live_notifications`; an applied migration is never edited, so the function is replaced here
-- with one more branch, the issue of an attachment (the table has no run). Everything else is as
-- `reconstruction_intents_live_notify` left it. The payload and its parser:
-- packages/db/src/notify/live-event.ts (entity `issue_attachments`); the browser's invalidation:
-- apps/web/src/components/live/live-invalidation.ts. The company is the row's own `company_id`,
-- as for every announced table: the live hub sends an event only to that company's subscribers.

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
    ELSIF TG_TABLE_NAME = 'issue_attachments' THEN
        -- A task's file: its task only (an attachment belongs to no run).
        issue := changed.issue_id;
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

CREATE TRIGGER "issue_attachments_live_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "issue_attachments"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_live_change"();
