import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  // the composition root of every context's tables (server/main/schema.ts)
  schema: './server/main/schema.ts',
  out: './drizzle/migrations',
  schemaFilter: ['crm', 'chessboard', 'catalog', 'ops', 'auth', 'profile', 'messenger', 'notifications', 'rewards'],
  casing: 'snake_case',
});
