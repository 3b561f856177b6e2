import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: ['./server/crm/schema.ts', './server/chessboard/schema.ts', './server/catalog/schema.ts', './server/ops/schema.ts', './server/auth/schema.ts', './server/profile/schema.ts', './server/messenger/schema.ts', './server/notifications/schema.ts'],
  out: './drizzle/migrations',
  schemaFilter: ['crm', 'chessboard', 'catalog', 'ops', 'auth', 'profile', 'messenger', 'notifications'],
  casing: 'snake_case',
});
