import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTEXT_ENV_SHAPES } from '../../server/main/env';
import { platformEnvShape } from '../../server/platform/env';

/**
 * platform/ is the ground floor: the contexts register their jobs, consumers and outboxes with it
 * (server/main/registry.ts hands the lists down), so no platform code names a context. A context's
 * name written as a value in platform code (a schema, a list entry, a label) means a context was wired
 * into the floor below it instead of registering.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const CONTEXTS = fs.readdirSync(path.join(ROOT, 'server'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && !['platform', 'contracts', 'main', 'trpc'].includes(d.name))
  .map((d) => d.name);

/** The job runner's and the audit's tables live in the `ops` schema by DESIGN.md's fixed names, and belong to platform. */
const ALLOWED = [
  { file: 'server/platform/jobs/schema.ts', literal: "'ops'" },
  { file: 'server/platform/audit.ts', literal: "'ops'" },
  // the header's name is published (ops reads it on the DLQ's messages); the consumer runner honours it
  { file: 'server/platform/kafka/topics.ts', literal: "'ops.requeue-for'" },
];

function platformFiles(dir = path.join(ROOT, 'server/platform')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const full = path.join(dir, d.name);
    if (d.isDirectory()) return platformFiles(full);
    return /\.tsx?$/.test(d.name) && !/\.test\.tsx?$/.test(d.name) ? [path.relative(ROOT, full)] : [];
  });
}

/** String literals of some code (comments left out) that are a context's name, or start with it and a dot (a schema-qualified table). */
function contextLiterals(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
  const found: string[] = [];
  for (const m of code.matchAll(/(['"`])([^'"`\n]*)\1/g)) {
    const value = m[2]!;
    if (CONTEXTS.some((c) => value === c || value.startsWith(`${c}.`))) found.push(m[0]);
  }
  return found;
}

describe('platform names no context', () => {
  it('the contexts are the folders of server/ (the scan looks for these names)', () => {
    expect(CONTEXTS).toEqual(expect.arrayContaining(['crm', 'chessboard', 'catalog', 'ops', 'profile', 'messenger', 'notifications', 'rewards']));
  });

  it('no platform file holds a context name as a value, apart from the listed exceptions', () => {
    const offending = platformFiles().flatMap((file) => contextLiterals(fs.readFileSync(path.join(ROOT, file), 'utf8'))
      .filter((text) => !ALLOWED.some((a) => a.file === file && a.literal === text))
      .map((text) => `${file}: ${text}`));
    expect(offending).toEqual([]);
  });

  it('finds a context name where one is written as a value, not in a comment or inside a longer name', () => {
    const code = "// the crm outbox\nexport const outboxes = ['crm', \"chessboard\"];\nconst table = `rewards.booking_endings`;\nconst label = 'crm_like';\n";
    expect(contextLiterals(code)).toEqual(["'crm'", '"chessboard"', '`rewards.booking_endings`']);
  });
});

describe('platform\'s settings name no context\'s', () => {
  const contextSettings = Object.values(CONTEXT_ENV_SHAPES).flatMap((shape) => Object.keys(shape));

  it('every context with settings has a slice (server/<context>/env.ts) in the composition root', () => {
    const withSlice = CONTEXTS.filter((c) => fs.existsSync(path.join(ROOT, 'server', c, 'env.ts')));
    expect(Object.keys(CONTEXT_ENV_SHAPES).sort()).toEqual(withSlice.sort());
  });

  it('no setting of a context is in platform\'s shape', () => {
    expect(Object.keys(platformEnvShape).filter((name) => contextSettings.includes(name))).toEqual([]);
  });

  it('server/platform/env.ts does not write a context\'s setting, even in a comment', () => {
    const source = fs.readFileSync(path.join(ROOT, 'server/platform/env.ts'), 'utf8');
    expect(contextSettings.filter((name) => new RegExp(`\\b${name}\\b`).test(source))).toEqual([]);
  });
});
