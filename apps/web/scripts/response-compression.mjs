// Whether `next start` gzips its answers (next.config.ts `compress`, read when the server starts).
// Pure: the caller passes the environment.
//
// In local mode the console answers the browser on the same machine over loopback, where bytes
// cost nothing and gzip costs CPU: compressing a 77 KiB board page, flushed chunk by chunk as it
// streams, was several milliseconds of a board request's server CPU. Authenticated
// mode is reached over a network, so it keeps gzip unless a compressing proxy in front makes it
// redundant (COPYBACK_WEB_COMPRESSION=off).

/**
 * @param {Readonly<Record<string, string | undefined>>} env (COPYBACK_WEB_COMPRESSION, COPYBACK_DEPLOYMENT_MODE)
 * @returns {boolean}
 */
export function compressResponses(env) {
  const requested = env.COPYBACK_WEB_COMPRESSION?.trim();
  if (requested === "on") return true;
  if (requested === "off") return false;
  if (requested) throw new Error(`COPYBACK_WEB_COMPRESSION must be "on" or "off" (got "${requested}")`);
  return (env.COPYBACK_DEPLOYMENT_MODE ?? "local") !== "local";
}
