import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The server modules a client component may import (eslint.config.mjs, "client components") ship to the
 * browser with everything they import by value. This walks those imports (type-only ones are erased)
 * and fails if the browser would get a database schema or a server package: auth/actor.ts once took
 * USER_ROLES from auth's drizzle schema, which put drizzle-orm's pg-core into every console page's bundle
 * (bench chessboard-grid: ~80 KB of chunk to parse and evaluate before the board renders).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
// the modules the eslint rule allows client components to import from server/
const CLIENT_SHARED = ['crm/deal', 'crm/permissions', 'profile/permissions', 'chessboard/catalog-action-roles', 'chessboard/hold-release-roles'];
const SERVER_ONLY_PACKAGES = /^(drizzle-orm|postgres|kafkajs|pino|prom-client|@node-rs\/|@opentelemetry\/|node:)/;

function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  for (const node of source.statements) {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly = ts.isImportDeclaration(node) ? node.importClause?.isTypeOnly
        || (node.importClause?.namedBindings && ts.isNamedImports(node.importClause.namedBindings) && !node.importClause.name
          && node.importClause.namedBindings.elements.length > 0 && node.importClause.namedBindings.elements.every((e) => e.isTypeOnly))
        : node.isTypeOnly;
      if (!typeOnly) out.push(node.moduleSpecifier.text);
    }
  }
  return out;
}

/** Every file reached by value imports from `start`, and the packages named on the way. */
function reach(start: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of valueImports(file)) {
      if (!spec.startsWith('.') && !spec.startsWith('@/')) { packages.add(spec); continue; }
      const base = spec.startsWith('@/') ? path.join(ROOT, spec.slice(2)) : path.resolve(path.dirname(file), spec);
      const resolved = [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')].find((f) => fs.existsSync(f));
      if (!resolved) throw new Error(`${path.relative(ROOT, file)}: cannot resolve ${spec}`);
      visit(resolved);
    }
  };
  visit(path.join(ROOT, 'server', `${start}.ts`));
  return { files: [...files].map((f) => path.relative(ROOT, f)), packages: [...packages] };
}

describe('server modules shared with client components', () => {
  it.each(CLIENT_SHARED)('%s reaches no schema and no server-only package by value', (start) => {
    const { files, packages } = reach(start);
    expect(files.filter((f) => /(^|\/)schema\.ts$/.test(f))).toEqual([]);
    expect(packages.filter((p) => SERVER_ONLY_PACKAGES.test(p))).toEqual([]);
  });

  it('the list matches the modules eslint.config.mjs allows client components to import', () => {
    const config = fs.readFileSync(path.join(ROOT, 'eslint.config.mjs'), 'utf8');
    expect(config).toContain(`(?!(${CLIENT_SHARED.join('|')})$)`);
  });
});
