import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Comments say why the code is as it is now. Which ticket asked for it belongs to the commit message,
 * and a decision's story to docs/decisions/. This fails on ticket references in the comments of the
 * code that runs (server/, app/, scripts/, bench/ and the root config files): `issue #17`, `issue 15`,
 * `(#19 point 7)`. An upstream reference names its repository (`porsager/postgres#1208`) and passes.
 * Tests and the test kits (test/faults/, test/harness/, e2e/) are not checked.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const CHECKED = /^(server|app|scripts|bench)\/.*\.(ts|tsx|mjs|js)$|^[^/]+\.(ts|mjs)$/;
const NOT_CHECKED = /(\.test\.ts|\.spec\.ts|\.fixtures\.ts)$|^test\/|^e2e\//;

/** A ticket reference in a comment's text: `issue #N` / `issue N`, or a bare `#N` (not `owner/repo#N`). */
export const TICKET_REFERENCE = /\bissues? ?#?\d+|(?:^|[^\w/#&])#\d+(?![\w])/i;

/** Every comment of a source text (by the TypeScript parser: strings, templates and regexes are not comments). */
export function commentsOf(fileName: string, text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('x') ? ts.ScriptKind.TSX : undefined);
  const seen = new Set<number>();
  const out: { line: number; text: string }[] = [];
  const visit = (node: ts.Node) => {
    for (const range of [...(ts.getLeadingCommentRanges(text, node.pos) ?? []), ...(ts.getTrailingCommentRanges(text, node.end) ?? [])]) {
      if (seen.has(range.pos)) continue;
      seen.add(range.pos);
      out.push({ line: source.getLineAndCharacterOfPosition(range.pos).line + 1, text: text.slice(range.pos, range.end) });
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return out;
}

export function ticketReferences(fileName: string, text: string): string[] {
  return commentsOf(fileName, text).flatMap((c) => c.text.split('\n').map((l, i) => ({ line: c.line + i, l })))
    .filter(({ l }) => TICKET_REFERENCE.test(l))
    .map(({ line, l }) => `${fileName}:${line}: ${l.trim()}`);
}

describe('comments say why, now', () => {
  it('catches ticket references and lets upstream references, strings and code through', () => {
    const sample = [
      '// issue #17 measured the pipeline',
      '/** Repairs (issue 15). */',
      'const a = 1; // the short id lists show (#19 point 7)',
      '/*',
      ' * the notification centre, #20',
      ' */',
      '// upstream bug porsager/postgres#1208, fixed in porsager/postgres#1209',
      "const s = '// issue #4 in a string is data, not a comment';",
      'const r = /#12/;',
      '// the first issue is the one reported; colour #fff; step 3',
    ].join('\n');
    expect(ticketReferences('sample.ts', sample)).toEqual([
      'sample.ts:1: // issue #17 measured the pipeline',
      'sample.ts:2: /** Repairs (issue 15). */',
      'sample.ts:3: // the short id lists show (#19 point 7)',
      'sample.ts:5: * the notification centre, #20',
    ]);
    expect(ticketReferences('sample.tsx', 'export const X = () => <div>{/* see #21 */}</div>;')).toEqual(['sample.tsx:1: /* see #21 */']);
  });

  it('no comment of the running code names a ticket', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n')
      .filter((f) => CHECKED.test(f) && !NOT_CHECKED.test(f) && fs.existsSync(path.join(ROOT, f)));
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => ticketReferences(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(found, 'say why the code is as it is; the ticket goes in the commit message').toEqual([]);
  });
});
