import { Timestamp } from "~/components/format/timestamp";

/** "Finished 2 min ago", "Started …" or "Queued …": the latest thing that happened to a run. */
export function RunMoment({ run }: { run: { createdAt: Date; startedAt: Date | null; finishedAt: Date | null } }) {
  if (run.finishedAt)
    return (
      <>
        Finished <Timestamp date={run.finishedAt} />
      </>
    );
  if (run.startedAt)
    return (
      <>
        Started <Timestamp date={run.startedAt} />
      </>
    );
  return (
    <>
      Queued <Timestamp date={run.createdAt} />
    </>
  );
}
