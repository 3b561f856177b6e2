import type { Role } from '../auth/actor';

/** Who may hide / show / withdraw catalog objects and projects (router gate, command check, and the UI's buttons). */
export const CATALOG_ACTION_ROLES = ['developer_manager', 'pin_manager'] as const satisfies readonly Role[];
