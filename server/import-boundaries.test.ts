import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The ground-floor blocks of eslint.config.mjs (ARCHITECTURE.md "Import boundaries"): each case lints a
 * line of source as if it were the named file and expects the boundary rule to reject it or let it be.
 * A later config block that replaced these (or a regex that stopped matching) fails here.
 */
const eslint = new ESLint({ cwd: path.resolve(import.meta.dirname, '..') });
const RULE = '@typescript-eslint/no-restricted-imports';

async function rejected(filePath: string, code: string): Promise<boolean> {
  const [result] = await eslint.lintText(`${code}\nexport const used = x;\n`, { filePath });
  return result!.messages.some((m) => m.ruleId === RULE);
}

describe('import boundaries', () => {
  it.each([
    ['server/platform/db.ts', "import { x } from '../crm/schema';"],
    ['server/platform/db.ts', "import type { x } from '@/server/auth/actor';"],
    ['server/platform/db.ts', "export * from '../chessboard/schema';"],
    ['server/platform/kafka/lag.ts', "import { x } from '../../consumers';"],
    ['server/platform/jobs/run-log.ts', "import { x } from '../../ops/schema';"],
    ['server/platform/outbox/relay.int.test.ts', "import { x } from '../../crm/crm-test-fixtures';"],
    ['server/contracts/crm.ts', "import { x } from '../platform/kafka/topics';"],
    ['server/contracts/crm.ts', "import x from 'postgres';"],
    ['app/_components/session.tsx', "import { x } from '@/server/web-services';"],
    ['app/_components/session.tsx', "import { x } from '@/server/trpc/root';"],
  ])('%s may not: %s', async (file, code) => {
    expect(await rejected(file, code)).toBe(true);
  });

  it.each([
    ['server/platform/db.ts', "import { x } from './env';"],
    ['server/platform/outbox/write.ts', "import { x } from '../../contracts';"],
    ['server/platform/outbox/write.ts', "import { x } from '../jobs/types';"],
    ['server/platform/outbox/relay.int.test.ts', "import { x } from '../../testing/harness';"],
    ['server/contracts/crm.ts', "import { x } from './topics';"],
    ['server/contracts/crm.ts', "import { x } from 'zod';"],
    ['server/crm/commands/create-booking.ts', "import { x } from '../../platform/outbox/write';"],
    ['app/_components/session.tsx', "import type { x } from '@/server/trpc/root';"],
    ['app/_components/session.tsx', "import { x } from '@/server/crm/permissions';"],
    ['app/(console)/layout.tsx', "import { x } from '@/server/web-services';"],
  ])('%s may: %s', async (file, code) => {
    expect(await rejected(file, code)).toBe(false);
  });
});
