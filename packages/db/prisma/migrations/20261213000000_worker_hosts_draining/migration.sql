-- Issue 23 (host affinity): a worker that stops gracefully marks its row draining (no new claims,
-- runs in flight still finish, the row keeps beating) and deletes it once drained.

-- AlterTable
ALTER TABLE "worker_hosts" ADD COLUMN     "draining_since" TIMESTAMPTZ(3);
