// The attachment store's size cap, apart from the store's I/O so the console's upload control can
// refuse a too-large file before sending it (the server refuses it again: 413).

/** Default cap on one attachment (25 MiB): saved notes and sources, not build artefacts. */
export const DEFAULT_MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
