// decideReconstruction (R-RC-1..R-RC-6): pure admission of "Continue from saved sources".
import { EXPORT_LIMIT_CAUSE, EXPORT_RETRY_EXHAUSTED_CAUSE } from "../causes";

/**
 * The holds whose source run has an accepted result whose export failed (NWF "Continue after
 * confirmed source destruction": "when an old export failed"): only these may be reconstructed.
 */
export const RECONSTRUCTABLE_CAUSES = [EXPORT_RETRY_EXHAUSTED_CAUSE, EXPORT_LIMIT_CAUSE] as const;
