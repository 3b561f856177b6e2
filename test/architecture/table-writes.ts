import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Who writes which table, read from the source (every table has one owner context that alone
 * writes it). Parse-only (no type checker, so it runs in a second): the TypeScript AST of every file,
 * imports resolved by path. What counts as a write:
 *   - drizzle `x.insert(T)` / `x.update(T)` / `x.delete(T)` where T resolves to a declared table;
 *   - raw SQL in a `sql`-tagged template (or a string given to `.unsafe()` / `sql.raw()`):
 *     `INSERT INTO t` / `UPDATE t` / `DELETE FROM t`, t a literal `schema.table` or a `${T}` placeholder;
 *   - `writeOutbox*(tx, 'crm' | table, …)`: the platform's outbox writer inserts for its caller;
 *   - a consumer definition `{ topics, inbox: 'crm' }`: the platform's runner writes that inbox for it.
 * An expression that resolves to no declared table is reported as `dynamic` (a table chosen at run time).
 *
 * And who reads which table or view (`readsOf`):
 *   - drizzle `.from(T)` and `.innerJoin(T)` / `.leftJoin(T)` / … where T resolves to a declared table or view;
 *   - raw SQL naming `schema.name` anywhere (FROM, JOIN, a fragment spliced into them), or a `${T}` placeholder.
 * Views are declared like tables (`x.view('v_…', …)`), owned by the folder that declares them.
 */

export interface TableDeclaration {
  /** `schema.table` as PostgreSQL knows it */
  table: string;
  /** the context folder (first folder under server/) of the file that declares it */
  owner: string;
  file: string;
  kind: 'table' | 'view';
}

export interface TableRead {
  file: string;
  context: string;
  /** `schema.table` or `schema.view`, or `dynamic` */
  table: string;
  how: 'drizzle' | 'sql';
  line: number;
}

export interface TableWrite {
  /** path relative to the repository root, `/`-separated */
  file: string;
  /** the context folder of the writing file (`(root)` for the composition roots in server/main/) */
  context: string;
  /** `schema.table`, or `dynamic` when the code picks the table at run time */
  table: string;
  how: 'drizzle' | 'sql' | 'outbox-writer' | 'consumer-inbox';
  line: number;
}

export const contextOf = (file: string): string => {
  const parts = file.split('/');
  return parts[0] === 'server' && parts.length > 2 && parts[1] !== 'main' ? parts[1] : '(root)';
};

/** Every non-test .ts under `dir` (relative to `root`). */
export function sourceFiles(root: string, dir = 'server'): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(child);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts')) out.push(child);
    }
  };
  walk(dir);
  return out.sort();
}

interface ParsedFile {
  file: string;
  source: ts.SourceFile;
  /** local name → (module file, exported name) */
  imports: Map<string, { from: string; name: string }>;
  /** namespace import name → module file */
  namespaces: Map<string, string>;
  /** `export * from` / `export { a as b } from` targets */
  reExports: { from: string; names: Map<string, string> | null }[];
  /** top-level and nested `const x = …` by name */
  variables: Map<string, ts.Expression[]>;
}

/** A statement's text with each `${…}` as `\uE000<n>\uE000`, and the placeholders' expressions by n. */
function sqlText(template: ts.TemplateLiteral | ts.StringLiteral): { text: string; placeholders: ts.Expression[] } {
  const pieces: string[] = [];
  const placeholders: ts.Expression[] = [];
  if (ts.isTemplateExpression(template)) {
    pieces.push(template.head.text);
    for (const span of template.templateSpans) {
      placeholders.push(span.expression);
      pieces.push(`\uE000${placeholders.length - 1}\uE000`, span.literal.text);
    }
  } else pieces.push(template.text);
  return { text: pieces.join(''), placeholders };
}

export class TableWriteScanner {
  private parsed = new Map<string, ParsedFile>();
  /** file → exported name → `schema.table` */
  private declaredIn = new Map<string, Map<string, string>>();
  readonly declarations: TableDeclaration[] = [];
  /** PostgreSQL schema names declared with pgSchema() */
  readonly schemas = new Set<string>();

  constructor(private root: string, private files: string[], private readSource: (file: string) => string | undefined = (f) => {
    const p = path.join(root, f);
    return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined;
  }) {
    for (const f of files) this.collectDeclarations(f);
  }

  private parse(file: string): ParsedFile | undefined {
    const cached = this.parsed.get(file);
    if (cached) return cached;
    const text = this.readSource(file);
    if (text === undefined) return undefined;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const p: ParsedFile = { file, source, imports: new Map(), namespaces: new Map(), reExports: [], variables: new Map() };
    const visit = (node: ts.Node) => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        const from = this.resolveModule(file, node.moduleSpecifier.text);
        const clause = node.importClause;
        if (from && clause?.namedBindings) {
          if (ts.isNamespaceImport(clause.namedBindings)) p.namespaces.set(clause.namedBindings.name.text, from);
          else for (const el of clause.namedBindings.elements) p.imports.set(el.name.text, { from, name: (el.propertyName ?? el.name).text });
        }
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const from = this.resolveModule(file, node.moduleSpecifier.text);
        if (from) {
          const names = node.exportClause && ts.isNamedExports(node.exportClause)
            ? new Map(node.exportClause.elements.map((el) => [el.name.text, (el.propertyName ?? el.name).text]))
            : null;
          p.reExports.push({ from, names });
        }
      } else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
        const list = p.variables.get(node.name.text) ?? [];
        list.push(node.initializer);
        p.variables.set(node.name.text, list);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    this.parsed.set(file, p);
    return p;
  }

  private resolveModule(from: string, spec: string): string | undefined {
    let base: string;
    if (spec.startsWith('@/')) base = spec.slice(2);
    else if (spec.startsWith('.')) base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
    else return undefined;
    for (const candidate of [`${base}.ts`, `${base}/index.ts`, base]) {
      if (candidate.endsWith('.ts') && this.readSource(candidate) !== undefined) return candidate;
    }
    return undefined;
  }

  /** pgSchema('x') variables, `x.table('t', …)`, `inboxTable(x)` / `outboxTable(x)` of a file. */
  private collectDeclarations(file: string): void {
    const p = this.parse(file);
    if (!p) return;
    const schemaVars = new Map<string, string>();
    const declared = new Map<string, string>();
    for (const stmt of p.source.statements) {
      if (!ts.isVariableStatement(stmt)) continue;
      for (const d of stmt.declarationList.declarations) {
        if (!ts.isIdentifier(d.name) || !d.initializer || !ts.isCallExpression(d.initializer)) continue;
        const call = d.initializer;
        const [arg0] = call.arguments;
        if (ts.isIdentifier(call.expression) && call.expression.text === 'pgSchema' && arg0 && ts.isStringLiteral(arg0)) {
          schemaVars.set(d.name.text, arg0.text);
          this.schemas.add(arg0.text);
          continue;
        }
        let table: string | undefined;
        let kind: TableDeclaration['kind'] = 'table';
        // a view: x.view('v_name', …).as(…) or .existing() — the call chain starts at x.view(…)
        let head: ts.Expression = call;
        while (ts.isCallExpression(head) && ts.isPropertyAccessExpression(head.expression) && ts.isCallExpression(head.expression.expression)) head = head.expression.expression;
        if (ts.isCallExpression(head) && ts.isPropertyAccessExpression(head.expression) && head.expression.name.text === 'view'
          && ts.isIdentifier(head.expression.expression) && schemaVars.has(head.expression.expression.text) && head.arguments[0] && ts.isStringLiteral(head.arguments[0])) {
          table = `${schemaVars.get(head.expression.expression.text)}.${head.arguments[0].text}`;
          kind = 'view';
        } else if (ts.isPropertyAccessExpression(call.expression) && call.expression.name.text === 'table'
          && ts.isIdentifier(call.expression.expression) && schemaVars.has(call.expression.expression.text) && arg0 && ts.isStringLiteral(arg0)) {
          table = `${schemaVars.get(call.expression.expression.text)}.${arg0.text}`;
        } else if (ts.isIdentifier(call.expression) && /^(inbox|outbox)Table$/.test(call.expression.text) && arg0 && ts.isIdentifier(arg0) && schemaVars.has(arg0.text)) {
          table = `${schemaVars.get(arg0.text)}.${call.expression.text.replace('Table', '')}`;
        }
        if (table) {
          declared.set(d.name.text, table);
          this.declarations.push({ table, owner: contextOf(file), file, kind });
        }
      }
    }
    if (declared.size > 0) this.declaredIn.set(file, declared);
  }

  /** The table an exported name of a module is, following re-exports. */
  private exportedTable(file: string, name: string, depth = 0): string | undefined {
    if (depth > 10) return undefined;
    const own = this.declaredIn.get(file)?.get(name);
    if (own) return own;
    const p = this.parse(file);
    for (const r of p?.reExports ?? []) {
      const inner = r.names ? r.names.get(name) : name;
      if (inner === undefined) continue;
      const t = this.exportedTable(r.from, inner, depth + 1);
      if (t) return t;
    }
    return undefined;
  }

  /** The tables an expression may be (a declared table, a local const, a conditional, an object's property); empty = unknown. */
  tablesOf(p: ParsedFile, expr: ts.Expression, depth = 0): Set<string> {
    const out = new Set<string>();
    if (depth > 6) return out;
    const add = (s: Set<string>) => s.forEach((t) => out.add(t));
    if (ts.isParenthesizedExpression(expr) || ts.isAsExpression(expr) || ts.isNonNullExpression(expr) || ts.isSatisfiesExpression(expr)) {
      return this.tablesOf(p, expr.expression, depth + 1);
    }
    if (ts.isIdentifier(expr)) {
      const own = this.declaredIn.get(p.file)?.get(expr.text);
      if (own) return new Set([own]);
      const imp = p.imports.get(expr.text);
      if (imp) {
        const t = this.exportedTable(imp.from, imp.name);
        if (t) out.add(t);
        return out;
      }
      for (const init of p.variables.get(expr.text) ?? []) add(this.tablesOf(p, init, depth + 1));
      return out;
    }
    if (ts.isConditionalExpression(expr)) {
      add(this.tablesOf(p, expr.whenTrue, depth + 1));
      add(this.tablesOf(p, expr.whenFalse, depth + 1));
      return out;
    }
    if (ts.isPropertyAccessExpression(expr) || ts.isElementAccessExpression(expr)) {
      const key = ts.isPropertyAccessExpression(expr) ? expr.name.text
        : ts.isStringLiteral(expr.argumentExpression) ? expr.argumentExpression.text : null;
      if (ts.isIdentifier(expr.expression) && p.namespaces.has(expr.expression.text) && key) {
        const t = this.exportedTable(p.namespaces.get(expr.expression.text)!, key);
        if (t) out.add(t);
        return out;
      }
      for (const obj of this.objectLiterals(p, expr.expression, depth + 1)) {
        for (const prop of obj.properties) {
          if (!ts.isPropertyAssignment(prop) && !ts.isShorthandPropertyAssignment(prop)) continue;
          const name = prop.name && (ts.isIdentifier(prop.name) || ts.isStringLiteral(prop.name)) ? prop.name.text : undefined;
          if (key !== null && name !== key) continue;
          add(this.tablesOf(p, ts.isPropertyAssignment(prop) ? prop.initializer : prop.name, depth + 1));
        }
      }
      return out;
    }
    return out;
  }

  private objectLiterals(p: ParsedFile, expr: ts.Expression, depth: number): ts.ObjectLiteralExpression[] {
    if (depth > 6) return [];
    while (ts.isParenthesizedExpression(expr) || ts.isAsExpression(expr) || ts.isSatisfiesExpression(expr)) expr = expr.expression;
    if (ts.isObjectLiteralExpression(expr)) return [expr];
    if (ts.isConditionalExpression(expr)) return [...this.objectLiterals(p, expr.whenTrue, depth + 1), ...this.objectLiterals(p, expr.whenFalse, depth + 1)];
    if (ts.isIdentifier(expr)) return (p.variables.get(expr.text) ?? []).flatMap((init) => this.objectLiterals(p, init, depth + 1));
    return [];
  }

  /** Every write of one file. */
  writesOf(file: string): TableWrite[] {
    const p = this.parse(file);
    if (!p) return [];
    const writes: TableWrite[] = [];
    const context = contextOf(file);
    const record = (node: ts.Node, how: TableWrite['how'], tables: Iterable<string>) => {
      const line = p.source.getLineAndCharacterOfPosition(node.getStart(p.source)).line + 1;
      for (const table of tables) writes.push({ file, context, table, how, line });
    };
    const tablesOrDynamic = (expr: ts.Expression) => {
      const t = this.tablesOf(p, expr);
      return t.size > 0 ? t : ['dynamic'];
    };

    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
        // drizzle: <db|tx>.insert(T) / .update(T) / .delete(T)
        if (ts.isPropertyAccessExpression(callee) && /^(insert|update|delete)$/.test(name) && node.arguments.length === 1) {
          const tables = this.tablesOf(p, node.arguments[0]);
          if (tables.size > 0) record(node, 'drizzle', tables);
          // an unknown argument is a table only if the receiver is a database handle (Map#delete, Hash#update are not)
          else if (/(^|\.)(tx|rtx|trx|db|database)$/i.test(callee.expression.getText(p.source))) record(node, 'drizzle', ['dynamic']);
        }
        // the platform's outbox writer: the caller names the outbox
        if (/^writeOutbox/.test(name) && node.arguments.length >= 2) {
          const target = node.arguments[1];
          if (ts.isStringLiteral(target)) record(node, 'outbox-writer', [`${target.text}.outbox`]);
          else record(node, 'outbox-writer', tablesOrDynamic(target));
        }
        // SQL handed over as a plain string: sql.raw('…'), postgres.js .unsafe('…')
        if (/^(unsafe|raw)$/.test(name) && node.arguments[0] && (ts.isTemplateExpression(node.arguments[0]) || ts.isNoSubstitutionTemplateLiteral(node.arguments[0]) || ts.isStringLiteral(node.arguments[0]))) {
          scanSql(node.arguments[0], false);
        }
      }
      if (ts.isTaggedTemplateExpression(node) && /sql$/i.test(node.tag.getText(p.source))) scanSql(node.template, true);
      // a consumer definition: the runner records every message in the inbox it names
      if (ts.isObjectLiteralExpression(node)) {
        const props = new Map(node.properties.filter(ts.isPropertyAssignment).map((a) => [a.name.getText(p.source), a.initializer]));
        const inbox = props.get('inbox');
        if (props.has('topics') && inbox && ts.isStringLiteral(inbox)) record(inbox, 'consumer-inbox', [`${inbox.text}.inbox`]);
      }
      ts.forEachChild(node, visit);
    };

    /** INSERT INTO / UPDATE / DELETE FROM in a template: literal `schema.table`, or `${T}`. */
    const scanSql = (template: ts.TemplateLiteral | ts.StringLiteral, tagged: boolean) => {
      const { text, placeholders } = sqlText(template);
      const re = /(\w+\s+)?\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\uE000(\d+)\uE000(\.\w+)?|"?(\w+)"?\."?(\w+)"?)/gi;
      for (const m of text.matchAll(re)) {
        // FOR UPDATE / FOR NO KEY UPDATE (row locks) and ON CONFLICT … DO UPDATE are not statements
        if (m[2].toUpperCase() === 'UPDATE' && /^(FOR|KEY|DO)\s+$/i.test(m[1] ?? '')) continue;
        if (m[4] !== undefined) {
          const expr = placeholders[Number(m[4])];
          // `${sql.identifier(schema)}.inbox`: a schema chosen at run time
          const tables = m[5] || !tagged ? new Set<string>() : this.tablesOf(p, expr);
          record(template, 'sql', tables.size > 0 ? tables : ['dynamic']);
        } else if (this.schemas.has(m[6])) {
          record(template, 'sql', [`${m[6]}.${m[7]}`]);
        }
      }
    };
    visit(p.source);
    return writes;
  }

  /** Every read of one file: drizzle FROM / JOIN of a declared table or view, every table or view raw SQL names. */
  readsOf(file: string): TableRead[] {
    const p = this.parse(file);
    if (!p) return [];
    const reads: TableRead[] = [];
    const context = contextOf(file);
    const record = (node: ts.Node, how: TableRead['how'], tables: Iterable<string>) => {
      const line = p.source.getLineAndCharacterOfPosition(node.getStart(p.source)).line + 1;
      for (const table of tables) reads.push({ file, context, table, how, line });
    };
    const scanSql = (template: ts.TemplateLiteral | ts.StringLiteral, tagged: boolean) => {
      const { text, placeholders } = sqlText(template);
      // every schema.name the statement names — after FROM / JOIN, or in a fragment spliced into one
      // (`${PAIRS}`) — and every `${T}` placeholder that is a table: what a statement names, it reads or
      // writes, and a write of another context's table is a failure of its own
      // (string literals left out: 'crm.reports-daily-rollup' is a lock's name, not a table)
      for (const m of text.replace(/--[^\n]*/g, '').replace(/'[^']*'/g, "''").matchAll(/(?<![\w.])"?(\w+)"?\."?(\w+)"?/g)) {
        if (this.schemas.has(m[1])) record(template, 'sql', [`${m[1]}.${m[2]}`]);
      }
      if (tagged) {
        for (const expr of placeholders) {
          if (ts.isIdentifier(expr)) {
            const tables = this.tablesOf(p, expr);
            if (tables.size > 0) record(template, 'sql', tables);
          }
        }
      }
    };
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const name = node.expression.name.text;
        if (/^(from|innerJoin|leftJoin|rightJoin|fullJoin|crossJoin)$/.test(name) && node.arguments[0]) {
          const tables = this.tablesOf(p, node.arguments[0]);
          if (tables.size > 0) record(node, 'drizzle', tables);
        }
        if (/^(unsafe|raw)$/.test(name) && node.arguments[0] && (ts.isTemplateExpression(node.arguments[0]) || ts.isNoSubstitutionTemplateLiteral(node.arguments[0]) || ts.isStringLiteral(node.arguments[0]))) {
          scanSql(node.arguments[0], false);
        }
      }
      if (ts.isTaggedTemplateExpression(node) && /sql$/i.test(node.tag.getText(p.source))) scanSql(node.template, true);
      ts.forEachChild(node, visit);
    };
    visit(p.source);
    return reads;
  }

  allReads(): TableRead[] {
    return this.files.flatMap((f) => this.readsOf(f));
  }

  allWrites(): TableWrite[] {
    return this.files.flatMap((f) => this.writesOf(f));
  }
}
