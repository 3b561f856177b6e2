import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  // the composition root of every context's tables (server/schema.ts)
  schema: './server/schema.ts',
  out: './drizzle/migrations',
  schemaFilter: ['crm', 'chessboard', 'catalog', 'ops', 'auth', 'profile', 'messenger', 'notifications'],
  casing: 'snake_case',
});
