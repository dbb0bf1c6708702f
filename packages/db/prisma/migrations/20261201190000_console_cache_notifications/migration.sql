-- The console's render cache (issue 14, apps/web/scripts/render-cache.mjs) drops every cached
-- answer on any notification of `copyback_events`. The pages it caches (the issues board and the
-- issue page) also show rows of tables the `live_notifications` triggers do not announce: the
-- company (name, switcher), agents (filter, assignee, runs), users (creator, message authors),
-- run results (the agent panel's outcome), and, for export holds, environment leases and workspace
-- operations. Written by hand like that migration. The payload names the table; the live feed's
-- parser (packages/db/src/notify/live-event.ts) does not know these entities and skips them, so
-- pages are not refreshed for them, only cached answers dropped. Ids only, as there.
--   {"companyId": uuid|null, "entity": table name, "id": uuid, "op": "INSERT"|"UPDATE"|"DELETE"}

CREATE FUNCTION "copyback_notify_console_change"() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    changed record;
    company text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        changed := OLD;
    ELSE
        changed := NEW;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD IS NOT DISTINCT FROM NEW THEN
        RETURN NULL;
    END IF;
    -- Tables differ in their columns (users have no company): read it from the row as JSON.
    IF TG_TABLE_NAME = 'companies' THEN
        company := changed.id::text;
    ELSE
        company := to_jsonb(changed) ->> 'company_id';
    END IF;
    PERFORM pg_notify('copyback_events', json_build_object(
        'companyId', company,
        'entity', TG_TABLE_NAME,
        'id', changed.id,
        'op', TG_OP
    )::text);
    RETURN NULL;
END;
$$;

CREATE TRIGGER "companies_console_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "companies"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_console_change"();

CREATE TRIGGER "agents_console_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "agents"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_console_change"();

CREATE TRIGGER "users_console_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "users"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_console_change"();

CREATE TRIGGER "native_run_results_console_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "native_run_results"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_console_change"();

CREATE TRIGGER "environment_leases_console_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "environment_leases"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_console_change"();

CREATE TRIGGER "workspace_operations_console_notify"
    AFTER INSERT OR UPDATE OR DELETE ON "workspace_operations"
    FOR EACH ROW EXECUTE FUNCTION "copyback_notify_console_change"();
