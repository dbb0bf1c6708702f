// The REST path of an attachment's bytes, relative to the console's URL (COPYBACK_API_URL for an
// agent): GET with the run's own key answers them with X-Content-SHA256 (R-RC-5). One place, so
// the route, the listing and the reconstruction's context cannot disagree.
export function attachmentContentPath(issueId: string, attachmentId: string): string {
  return `/api/issues/${issueId}/attachments/${attachmentId}/content`;
}
