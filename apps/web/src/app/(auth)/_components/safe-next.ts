// Where to go after signing in: only a path on this console (`/...`, never `//host` or a URL),
// so a crafted sign-in link cannot send a fresh session to another site.
export function safeNextPath(next: string | string[] | undefined): string {
  const value = Array.isArray(next) ? next[0] : next;
  if (!value || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  return value;
}
