import { Timestamp } from "~/components/format/timestamp";
import type { FinalizationAttempt } from "~/server/routers/runs/finalization-attempts";

/** Each finalization attempt of a run: its number, how it ended, its failure code and when. */
export function FinalizationAttempts({ attempts }: { attempts: readonly FinalizationAttempt[] }) {
  if (attempts.length === 0) return <p className="mt-2 text-sm text-slate-500">No finalization attempt yet.</p>;
  return (
    <table className="mt-2 w-full text-left text-sm" data-testid="finalization-attempts">
      <thead className="text-xs text-slate-500">
        <tr>
          <th scope="col" className="py-1.5 pr-4 font-medium">
            Attempt
          </th>
          <th scope="col" className="py-1.5 pr-4 font-medium">
            Result
          </th>
          <th scope="col" className="py-1.5 pr-4 font-medium">
            Failure code
          </th>
          <th scope="col" className="py-1.5 pr-4 font-medium">
            Started
          </th>
          <th scope="col" className="py-1.5 font-medium">
            Finished
          </th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {attempts.map((attempt, index) => (
          <tr key={`${attempt.attempt}-${index}`} data-testid="finalization-attempt">
            <td className="py-2 pr-4">{attempt.attempt}</td>
            <td className="py-2 pr-4">
              {attempt.status === "succeeded" ? (attempt.omitted ? "Succeeded (export omitted)" : "Succeeded") : attempt.status === "failed" ? (attempt.exhausted ? "Failed: retries used up" : "Failed") : "Running"}
            </td>
            <td className="py-2 pr-4">{attempt.failureCode ? <code className="font-mono text-xs">{attempt.failureCode}</code> : "—"}</td>
            <td className="py-2 pr-4">
              <Timestamp date={attempt.startedAt} />
            </td>
            <td className="py-2">{attempt.finishedAt ? <Timestamp date={attempt.finishedAt} /> : "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
