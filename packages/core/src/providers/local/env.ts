// The host settings the local provider reads from the controller's environment.

/** The PATH given to agents (their environment is otherwise clean). */
export function hostSearchPath(): string {
  return process.env.PATH || "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
}
