// `npm run lint`: typescript-eslint (recommended) for every TypeScript file, React hooks rules and
// Next.js's own rules for the console, the layering rule the guide asks for (no SQL in app/), and the
// import boundaries of the ground floor (platform/, contracts/) and of client components.
import js from '@eslint/js';
import globals from 'globals';
import nextPlugin from '@next/eslint-plugin-next';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// Context boundaries: a bounded context under server/ imports another context only
// through the modules that context offers to others — its commands, queries, module APIs, live channel
// names, consumer definitions (ops' lag and saga views name the groups) and settings (env, which ops'
// dashboard reads). The rest of a context folder is its own. Composition roots (server/trpc,
// server/*.ts, app/) and tests are not restricted. The list
// is the set of cross-context imports the contexts offer (ARCHITECTURE.md "Boundaries and table
// owners"); a new entry is a decision to make a module public, not a way round the rule.
const CONTEXT_PUBLIC_MODULES = {
  auth: ['actor', 'session', 'directory'],
  catalog: ['queries', 'inbox-replay', 'card-projection.consumer', 'env'],
  chessboard: ['commands', 'queries', 'inbox-replay', 'crm-property-object-status.consumer', 'hold-release-roles', 'env'],
  // every crm command module is public (ops' repairs run crm's cancel under its own command name)
  crm: ['queries', 'booking', 'requisite-references', 'inbox-replay', 'commands/*'],
  messenger: ['live', 'inbox-replay', 'deal-chat.consumer'],
  notifications: ['booking-events', 'inbox-replay', 'booking-events.consumer'],
  // ops sits above the contexts it repairs and offers them nothing (its audit trail is platform's)
  ops: [],
  profile: ['module-api'],
};
const CONTEXTS = Object.keys(CONTEXT_PUBLIC_MODULES);
// Pairs that import each other in one direction only: the other way goes through a port the composition
// root wires (server/<context>/ports.ts, server/main/registry.ts). crm filters its lists by chessboard's
// objects, so the chessboard asks crm through a port; profile asks crm about bookings, so crm asks profile
// through a port.
const NEVER_IMPORTS = { chessboard: ['crm'], crm: ['profile'] };
const contextImportRule = (ctx, extraPublic = []) => ['error', {
  patterns: CONTEXTS.filter((other) => other !== ctx).map((other) => (NEVER_IMPORTS[ctx]?.includes(other) ? {
    group: [`**/${other}/**`],
    message: `${ctx} may not import ${other} (${other} imports ${ctx}): ask through ${ctx}'s port (server/${ctx}/ports.ts), wired by server/main/registry.ts.`,
  } : {
    // a public module inside a folder (commands/*) needs its folder re-included first (gitignore semantics)
    group: [`**/${other}/**`, ...[...CONTEXT_PUBLIC_MODULES[other], ...extraPublic].flatMap((m) => [
      ...(m.includes('/') ? [`!**/${other}/${m.slice(0, m.lastIndexOf('/'))}`] : []), `!**/${other}/${m}`,
    ])],
    message: CONTEXT_PUBLIC_MODULES[other].length
      ? `${ctx} may use ${other} only through its public modules (${CONTEXT_PUBLIC_MODULES[other].join(', ')}): eslint.config.mjs CONTEXT_PUBLIC_MODULES.`
      : `${ctx} may not import ${other}: it offers no module to other contexts (eslint.config.mjs CONTEXT_PUBLIC_MODULES).`,
  })).concat({
    group: ['**/main/*', '@/server/main/*'],
    message: 'server/main/ (the composition roots) imports the contexts, never the other way: read its job and consumer lists through platform/registry.ts.',
  }),
}];
const contextBoundaries = [
  ...CONTEXTS.map((ctx) => ({
    files: [`server/${ctx}/**/*.ts`],
    ignores: ['**/*.test.ts', '**/*fixtures.ts'],
    rules: { 'no-restricted-imports': contextImportRule(ctx) },
  })),
  {
    // the saga timeline is ops' documented read-only view across schemas (DESIGN: ops read views may join)
    files: ['server/ops/saga-timeline.ts'],
    rules: { 'no-restricted-imports': contextImportRule('ops', ['schema']) },
  },
];
const PLATFORM_BOUNDARY = 'platform/ is the ground floor: it imports only platform/, contracts/ and packages. Register the context with a composition root (server/main/worker.ts, server/main/web-services.ts, server/main/schema.ts) instead.';

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
  // ── Import boundaries: the ground floor ────────────────────────────────────────────────────────
  // contracts/ imports nothing but zod and each other; platform/ imports only itself, contracts/ and
  // packages. The contexts, server/main/worker.ts, jobs.ts, consumers.ts, schema.ts, metric-modules.ts and
  // web-services.ts sit above them: a context registers its tables, outboxes, jobs, consumers and
  // metrics with a composition root (worker.ts, web-services.ts, schema.ts), never platform reaching up.
  // (@typescript-eslint's variant of no-restricted-imports, so these blocks do not replace — and are not
  // replaced by — a built-in no-restricted-imports block on the same files; type imports count too.)
  {
    files: ['server/contracts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ regex: '^(?!zod$|\\./)', message: 'contracts/ imports nothing but zod and the other contracts (platform and the contexts build on them).' }],
      }],
    },
  },
  {
    files: ['server/platform/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ regex: '^(\\.\\./(?!contracts(/|$))|@/(?!server/(platform|contracts)(/|$)))', message: PLATFORM_BOUNDARY }],
      }],
    },
  },
  {
    files: ['server/platform/*/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ regex: '^(\\.\\./\\.\\./(?!contracts(/|$))|@/(?!server/(platform|contracts)(/|$)))', message: PLATFORM_BOUNDARY }],
      }],
    },
  },
  {
    // platform's own tests may also use the test harness (test/harness) and the local infra scripts
    files: ['server/platform/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ regex: '^(\\.\\./(?!(contracts(/|$)|\\.\\./test/harness/))|@/(?!server/(platform|contracts)(/|$)))', message: PLATFORM_BOUNDARY }],
      }],
    },
  },
  {
    files: ['server/platform/*/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ regex: '^(\\.\\./\\.\\./(?!contracts/|\\.\\./test/harness/|\\.\\./scripts/infra/)|@/(?!server/(platform|contracts)(/|$)))', message: PLATFORM_BOUNDARY }],
      }],
    },
  },
  {
    // client components (and the modules they share) ship to the browser: from server/ only types and
    // the pure role/status lists they show; everything else goes through tRPC (a server component or
    // route handler outside _components/ may call server/ functions)
    files: ['app/**/_components/**/*.{ts,tsx}'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{
          regex: '^(@/server/(?!(crm/deal|crm/permissions|profile/permissions|chessboard/catalog-action-roles|chessboard/hold-release-roles)$)|(\\.\\./)+server/)',
          allowTypeImports: true,
          message: 'A client component imports only types and pure role/status modules from server/ (see eslint.config.mjs); call a tRPC procedure instead.',
        }],
      }],
    },
  },
  // ── end of the ground-floor boundaries ──────────────────────────────────────────────────────────
  {
    // Playwright fixtures take a `use` callback, which the hooks rule mistakes for React's use()
    files: ['e2e/**/*.ts'],
    rules: { 'react-hooks/rules-of-hooks': 'off' },
  },
  ...contextBoundaries,
);
