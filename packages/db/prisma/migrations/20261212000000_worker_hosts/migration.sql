-- Issue 23 part 1 (host affinity): the worker processes of each host (one row per running worker,
-- heartbeated; packages/core/src/deployment/worker-hosts.ts). A host whose rows are all stale has
-- no live worker: a run bound to it shows "Waiting for the worker on HOST".

-- CreateTable
CREATE TABLE "worker_hosts" (
    "id" UUID NOT NULL,
    "host_id" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "worker_hosts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "worker_hosts_host_id_last_seen_at_idx" ON "worker_hosts"("host_id", "last_seen_at");
