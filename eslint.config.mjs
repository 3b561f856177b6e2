// `npm run lint`: typescript-eslint (recommended) for every TypeScript file, React hooks rules and
// Next.js's own rules for the console, and the layering rule the guide asks for: no SQL in app/.
import js from '@eslint/js';
import globals from 'globals';
import nextPlugin from '@next/eslint-plugin-next';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['.next/**', '.data/**', 'node_modules/**', 'drizzle/migrations/**', 'next-env.d.ts', '**/*.js', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `_`-prefixed names are deliberately unused (destructuring a field away, an ignored parameter)
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // the plain-JS entry points (bootstrap, install patch, next.config) run in Node before any build step
    files: ['**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['app/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks, '@next/next': nextPlugin },
    rules: {
      ...reactHooks.configs.recommended.rules,
      ...nextPlugin.configs.recommended.rules,
      ...nextPlugin.configs['core-web-vitals'].rules,
      // app/ reaches data through tRPC procedures and server/ functions: no database driver or query builder here
      'no-restricted-imports': ['error', {
        patterns: [{ group: ['postgres', 'drizzle-orm', 'drizzle-orm/*'], message: 'No SQL in app/: put the query in server/<context>/queries and call it.' }],
      }],
    },
  },
  {
    // Playwright fixtures take a `use` callback, which the hooks rule mistakes for React's use()
    files: ['e2e/**/*.ts'],
    rules: { 'react-hooks/rules-of-hooks': 'off' },
  },
);
