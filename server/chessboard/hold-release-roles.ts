import type { Role } from '../auth/actor';

/**
 * Who may release a hold by hand from the console (runbook "manual release of a stuck hold"): the
 * router's gate of chessboard.releaseHold and the UI's release button. A pure module the console imports.
 */
export const HOLD_RELEASE_ROLES = ['ops', 'pin_manager'] as const satisfies readonly Role[];
