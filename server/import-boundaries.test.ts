import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The ground-floor blocks of eslint.config.mjs (ARCHITECTURE.md "Boundaries and table owners"): each case lints a
 * line of source as if it were the named file and expects the boundary rule to reject it or let it be.
 * A later config block that replaced these (or a regex that stopped matching) fails here.
 */
const eslint = new ESLint({ cwd: path.resolve(import.meta.dirname, '..') });
// the ground floor's rule and the context boundaries' (the built-in rule, CONTEXT_PUBLIC_MODULES)
const RULES = ['@typescript-eslint/no-restricted-imports', 'no-restricted-imports'];

async function rejected(filePath: string, code: string): Promise<boolean> {
  const [result] = await eslint.lintText(`${code}\nexport const used = x;\n`, { filePath });
  return result!.messages.some((m) => RULES.includes(m.ruleId ?? ''));
}

describe('import boundaries', () => {
  it.each([
    ['server/platform/db.ts', "import { x } from '../crm/schema';"],
    ['server/platform/db.ts', "import type { x } from '@/server/auth/actor';"],
    ['server/platform/db.ts', "export * from '../chessboard/schema';"],
    ['server/platform/kafka/lag.ts', "import { x } from '../../main/consumers';"],
    ['server/platform/jobs/run-log.ts', "import { x } from '../../ops/schema';"],
    ['server/platform/outbox/relay.int.test.ts', "import { x } from '../../../test/fixtures/crm.fixtures';"],
    ['server/contracts/crm.ts', "import { x } from '../platform/kafka/topics';"],
    ['server/contracts/crm.ts', "import x from 'postgres';"],
    ['app/_components/session.tsx', "import { x } from '@/server/main/web-services';"],
    ['app/_components/session.tsx', "import { x } from '@/server/main/app-router';"],
    // ops sits above the contexts it repairs: none imports it (the audit trail is platform's)
    ['server/chessboard/router.ts', "import { x } from '../ops/booking-repairs';"],
    ['server/chessboard/commands/command-support.ts', "import { x } from '../../ops/audit';"],
    ['server/crm/commands/cancel-booking.ts', "import { x } from '../../ops/schema';"],
    // one direction only: the other goes through the context's port (ports.ts, wired by server/main/registry.ts)
    ['server/chessboard/queries.ts', "import { x } from '../crm/commands/tenant-scope';"],
    ['server/crm/commands/input.ts', "import { x } from '../../profile/module-api';"],
    // a context reaches the composition root's lists through platform/registry.ts, never server/main/
    ['server/ops/dashboard/jobs.ts', "import { x } from '../../main/jobs';"],
    ['server/ops/dashboard/views.ts', "import type { x } from '../../main/env';"],
  ])('%s may not: %s', async (file, code) => {
    expect(await rejected(file, code)).toBe(true);
  });

  it.each([
    ['server/platform/db.ts', "import { x } from './env';"],
    ['server/platform/outbox/write.ts', "import { x } from '../../contracts';"],
    ['server/platform/outbox/write.ts', "import { x } from '../jobs/types';"],
    ['server/platform/outbox/relay.int.test.ts', "import { x } from '../../../test/harness/harness';"],
    ['server/contracts/crm.ts', "import { x } from './topics';"],
    ['server/contracts/crm.ts', "import { x } from 'zod';"],
    ['server/crm/commands/create-booking.ts', "import { x } from '../../platform/outbox/write';"],
    ['app/_components/session.tsx', "import type { x } from '@/server/main/app-router';"],
    ['app/_components/session.tsx', "import { x } from '@/server/crm/permissions';"],
    ['app/(console)/layout.tsx', "import { x } from '@/server/main/web-services';"],
    ['server/chessboard/commands/command-support.ts', "import { x } from '../../platform/audit';"],
    ['server/ops/router.ts', "import { x } from '../chessboard/hold-release-roles';"],
    ['server/ops/dashboard/jobs.ts', "import { x } from '../../platform/registry';"],
    ['server/ops/dashboard/views.ts', "import type { x } from '../../chessboard/env';"],
    ['server/crm/router.ts', "import { x } from '../chessboard/queries';"],
    ['server/profile/commands.ts', "import { x } from '../crm/requisite-references';"],
    ['server/crm/commands/input.ts', "import { x } from '../ports';"],
  ])('%s may: %s', async (file, code) => {
    expect(await rejected(file, code)).toBe(false);
  });
});
