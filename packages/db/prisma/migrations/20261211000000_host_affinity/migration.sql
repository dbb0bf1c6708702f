-- Issue 23 part 1 (host affinity): the host id (packages/core/src/deployment/host-id.ts) of the
-- host whose disk holds an execution workspace, and of a host-local (`local`) sandbox lease.
-- NULL: a workspace not bound yet (its first claiming host binds it); a remote sandbox.

-- AlterTable
ALTER TABLE "environment_leases" ADD COLUMN     "host_id" TEXT;

-- AlterTable
ALTER TABLE "execution_workspaces" ADD COLUMN     "host_id" TEXT;

-- CreateIndex
CREATE INDEX "execution_workspaces_host_id_idx" ON "execution_workspaces"("host_id");
