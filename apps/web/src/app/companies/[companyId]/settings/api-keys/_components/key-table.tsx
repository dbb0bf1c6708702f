"use client";

import { Timestamp } from "~/components/format/timestamp";

export interface KeyRow {
  id: string;
  name: string;
  keyPrefix: string;
  /** Whose key it is: a user's name and email, or an agent's name. */
  owner: { label: string; detail?: string };
  status: "active" | "expired" | "revoked";
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
}

const STATUS_STYLE: Record<KeyRow["status"], string> = {
  active: "bg-emerald-50 text-emerald-800 ring-emerald-200",
  expired: "bg-amber-50 text-amber-800 ring-amber-200",
  revoked: "bg-slate-100 text-slate-600 ring-slate-200",
};

/** Keys of one kind; `onRevoke` is offered for active keys only. */
export function KeyTable({ caption, ownerHeading, rows, onRevoke, revokingId }: {
  caption: string;
  ownerHeading: string;
  rows: KeyRow[];
  onRevoke: (row: KeyRow) => void;
  revokingId: string | null;
}) {
  return (
    <div className="card overflow-x-auto">
      <table className="w-full text-left text-sm">
        <caption className="sr-only">{caption}</caption>
        <thead className="border-b border-slate-200 bg-slate-50 text-xs font-medium uppercase tracking-wide text-slate-500">
          <tr>
            <th scope="col" className="px-4 py-2.5">Name</th>
            <th scope="col" className="px-4 py-2.5">{ownerHeading}</th>
            <th scope="col" className="px-4 py-2.5">Status</th>
            <th scope="col" className="px-4 py-2.5">Created</th>
            <th scope="col" className="px-4 py-2.5">Last used</th>
            <th scope="col" className="px-4 py-2.5">Expires</th>
            <th scope="col" className="px-4 py-2.5 text-right"><span className="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map((row) => (
            <tr key={row.id} data-testid="api-key-row">
              <td className="px-4 py-3">
                <p className="font-medium text-slate-900">{row.name}</p>
                <p className="font-mono text-xs text-slate-500">{row.keyPrefix}…</p>
              </td>
              <td className="px-4 py-3">
                <p className="text-slate-800">{row.owner.label}</p>
                {row.owner.detail ? <p className="text-xs text-slate-500">{row.owner.detail}</p> : null}
              </td>
              <td className="px-4 py-3">
                <span className={`rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${STATUS_STYLE[row.status]}`}>{row.status}</span>
              </td>
              <td className="px-4 py-3 text-slate-600"><Timestamp date={row.createdAt} /></td>
              <td className="px-4 py-3 text-slate-600">{row.lastUsedAt ? <Timestamp date={row.lastUsedAt} /> : "Never"}</td>
              <td className="px-4 py-3 text-slate-600">{row.expiresAt ? <time dateTime={row.expiresAt.toISOString()}>{row.expiresAt.toISOString().slice(0, 10)}</time> : "Never"}</td>
              <td className="px-4 py-3 text-right">
                {row.status === "active" ? (
                  <button type="button" className="btn btn-secondary" disabled={revokingId === row.id} onClick={() => onRevoke(row)}>
                    {revokingId === row.id ? "Revoking…" : "Revoke"}
                    <span className="sr-only"> key {row.name}</span>
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export const EXPIRY_OPTIONS = [
  { value: "", label: "Never" },
  { value: "30", label: "In 30 days" },
  { value: "90", label: "In 90 days" },
  { value: "365", label: "In a year" },
] as const;

export function expiresInDaysFrom(value: string): number | undefined {
  return value === "" ? undefined : Number(value);
}
