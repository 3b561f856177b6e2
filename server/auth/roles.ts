/**
 * The roles: a module of its own, imported by auth's schema (users.role) and by actor.ts. Client
 * components reach actor.ts through the role/permission modules they share, and a value import of the
 * schema put drizzle-orm's pg-core (~80 KB) into the browser's bundle of every console page
 * (test/architecture/client-shared-modules.test.ts).
 */
export const USER_ROLES = ['agent', 'developer_manager', 'pin_manager', 'ops', 'viewer', 'investor'] as const;
