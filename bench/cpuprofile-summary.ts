/**
 * Self time of a V8 .cpuprofile (BENCH_WEB_CPU_PROF and friends) by component and by function, in ms
 * per unit of work: `tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--per <n commands>] [--top 30] [--from <s>]`
 * (--from: leave out the first s seconds of the profile — the start-up and the warm-up).
 * Frames of the Next.js build's chunks are mapped back to their sources through the chunks' .map files
 * (node:module SourceMap), so bundled packages (tRPC, zod, superjson, drizzle) and our code are told apart.
 */
import fs from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// run from the repository's root, as npm runs it
const BENCH_WEB_NEXT = path.resolve('.data', 'bench-web', '.next');

interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

const maps = new Map<string, SourceMap | null>();
function sourceMapOf(url: string): SourceMap | null {
  if (!maps.has(url)) {
    let map: SourceMap | null = null;
    try {
      // a browser chunk (Chromium profile): the bench's web build serves /_next/static/ from .data/bench-web/.next/static/
      const file = url.startsWith('file://') ? fileURLToPath(url)
        : /^https?:\/\/[^/]+\/_next\/static\//.test(url) ? path.join(BENCH_WEB_NEXT, url.replace(/^https?:\/\/[^/]+\/_next\//, '').split('?')[0]) : url;
      // the map a chunk names in its last line (turbopack's browser maps have names of their own), else <chunk>.map
      const named = file.includes('/.next/') && fs.existsSync(file)
        ? fs.readFileSync(file, 'utf8').slice(-300).match(/\/\/# sourceMappingURL=(\S+)\s*$/)?.[1] : undefined;
      const mapFile = named && !named.startsWith('data:') ? path.join(path.dirname(file), named) : `${file}.map`;
      if (file.includes('/.next/') && fs.existsSync(mapFile)) map = new SourceMap(JSON.parse(fs.readFileSync(mapFile, 'utf8')));
    } catch { /* no map: the frame keeps its generated position */ }
    maps.set(url, map);
  }
  return maps.get(url)!;
}

/** The source file of a frame (through the chunk's source map when there is one). */
function sourceOf(f: CallFrame): string {
  if (f.url.startsWith('file://') && !f.url.includes('/.next/')) return fileURLToPath(f.url);
  const map = f.url ? sourceMapOf(f.url) : null;
  if (map) {
    const e = map.findEntry(f.lineNumber, f.columnNumber) as { originalSource?: string };
    if (e?.originalSource) return decodeURIComponent(e.originalSource);
  }
  return f.url || `(${f.functionName || 'program'})`;
}

/** The component a source belongs to (the categories of the per-command CPU table in docs/decisions). */
export function componentOf(source: string, fn: string): string {
  const s = source.replace(/\\/g, '/');
  const pkg = s.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1];
  if (pkg === 'src') return 'drizzle-orm'; // drizzle's source map names its sources src/…
  if (pkg) {
    if (pkg === 'next' || pkg.startsWith('@next/')) return s.includes('/compiled/') ? 'Next.js (compiled deps)' : 'Next.js';
    if (pkg.startsWith('@trpc/')) return 'tRPC';
    if (pkg === 'drizzle-orm') return 'drizzle-orm';
    if (pkg === 'postgres') return 'postgres.js';
    if (pkg === 'pino' || pkg.startsWith('pino-') || pkg === 'sonic-boom' || pkg === 'fast-redact') return 'logging (pino)';
    if (pkg === 'prom-client') return 'metrics (prom-client)';
    if (pkg.startsWith('@opentelemetry/')) return 'tracing (OpenTelemetry)';
    if (pkg === 'tsx' || pkg === 'esbuild') return 'tsx loader';
    return pkg;
  }
  if (/(^|\/)server\/[^/]+\/.*\.(ts|tsx)$/.test(s) || /(^|\/)app\/.*\.(ts|tsx)$/.test(s) || /(^|\/)(proxy|instrumentation)\.ts$/.test(s)) {
    if (/server\/(trpc|auth)\//.test(s) || /app\/api\//.test(s) || /proxy\.ts$/.test(s)) return 'our route/adapter, session, auth';
    if (/server\/platform\//.test(s)) return 'our platform (db, outbox, logger, metrics)';
    return 'our command code';
  }
  if (/scripts\/web-server\.ts$/.test(s)) return 'our web server';
  if (s === 'node:zlib') return 'compression (zlib)';
  if (s === 'node:fs') return 'logging (pino → fs write)';
  if (/async_hooks|async_context/.test(s)) return 'async context (AsyncLocalStorage hooks)';
  if (s.startsWith('node:internal/deps/undici') || s.includes('internal/deps/undici')) return 'node: undici (Request/Response/Headers)';
  if (/node:(internal\/)?(http|_http|net|stream|streams|webstreams)/.test(s) || /internal\/(http|streams|webstreams|net)/.test(s)) return 'node: http, net, streams';
  if (s.startsWith('node:') || s.startsWith('internal/')) return 'node: other';
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(idle)') return '(idle)';
  if (fn === '(program)') return '(program: V8/native)';
  return s.includes('/.next/') ? 'Next.js build (unmapped)' : s;
}

function main(): void {
  const args = process.argv.slice(2);
  const file = args.find((a, i) => !a.startsWith('--') && !['--per', '--top', '--from'].includes(args[i - 1] ?? ''));
  if (!file) throw new Error('usage: tsx bench/cpuprofile-summary.ts <file.cpuprofile> [--per <n>] [--top <n>]');
  const per = args.includes('--per') ? Number(args[args.indexOf('--per') + 1]) : 1;
  const top = args.includes('--top') ? Number(args[args.indexOf('--top') + 1]) : 30;
  const fromUs = args.includes('--from') ? Number(args[args.indexOf('--from') + 1]) * 1e6 : 0;
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // a native frame (no script: socket writes, JSON, regexps) counts for the nearest caller that has one
  const attributed = (id: number): { frame: CallFrame; native: string } => {
    const own = byId.get(id)!.callFrame;
    if (own.url || ['(garbage collector)', '(idle)', '(program)', '(root)'].includes(own.functionName)) return { frame: own, native: '' };
    for (let up = parent.get(id); up !== undefined; up = parent.get(up)) {
      const f = byId.get(up)!.callFrame;
      if (f.url) return { frame: f, native: own.functionName };
    }
    return { frame: own, native: '' };
  };
  const selfUs = new Map<number, number>();
  let t = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < fromUs) continue;
    selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const byComponent = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  // a socket write is counted for whom it writes: PostgreSQL (postgres.js) or an HTTP client
  const writer = (id: number): string | null => {
    for (let up: number | undefined = id; up !== undefined; up = parent.get(up)) {
      const u = byId.get(up)!.callFrame.url;
      if (u.includes('node_modules/postgres/')) return 'socket writes to PostgreSQL';
      if (u.includes('_http_outgoing') || u.includes('_http_server')) return 'socket writes to HTTP clients';
    }
    return null;
  };
  for (const [id, us] of selfUs) {
    const { frame: f, native } = attributed(id);
    const source = sourceOf(f);
    const component = (source === 'node:internal/stream_base_commons' && writer(id)) || componentOf(source, f.functionName);
    if (component === '(idle)') continue;
    busy += us;
    byComponent.set(component, (byComponent.get(component) ?? 0) + us);
    const key = `${native ? `${native} ← ` : ''}${f.functionName || '(anonymous)'}  ${source.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(server|app|scripts)\//, '$1/')}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  const ms = (us: number) => (us / 1000 / per).toFixed(3);
  console.log(`${file}: ${(busy / 1e6).toFixed(2)} s busy over ${((p.endTime - p.startTime - fromUs) / 1e6).toFixed(1)} s${per !== 1 ? `; ms per unit (÷ ${per})` : ' (ms)'}`);
  console.log('\nby component');
  for (const [k, us] of [...byComponent].sort((a, b) => b[1] - a[1])) console.log(`  ${ms(us).padStart(9)}  ${((100 * us) / busy).toFixed(1).padStart(5)} %  ${k}`);
  const bySource = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { frame } = attributed(id);
    const source = sourceOf(frame);
    if (componentOf(source, frame.functionName) === '(idle)') continue;
    bySource.set(source, (bySource.get(source) ?? 0) + us);
  }
  console.log(`\ntop ${top} source files (self, natives counted for their caller)`);
  for (const [k, us] of [...bySource].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${ms(us).padStart(9)}  ${((100 * us) / busy).toFixed(1).padStart(5)} %  ${k}`);
  console.log(`\ntop ${top} functions (self)`);
  for (const [k, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${ms(us).padStart(9)}  ${((100 * us) / busy).toFixed(1).padStart(5)} %  ${k}`);
}

main();
