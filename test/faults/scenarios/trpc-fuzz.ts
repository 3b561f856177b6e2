import { randomUUID } from 'node:crypto';
import { seedRequisiteSet } from '../../fixtures/profile.fixtures';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import fc from 'fast-check';
import superjson from 'superjson';
import { expect } from 'vitest';
import type { Actor } from '../../../server/auth/actor';
import { insertUser } from '../../fixtures/auth.fixtures';
import { createBookingCommand } from '../../../server/crm/commands/create-booking';
import type { TestContext } from '../../harness/harness';
import { createContextFor } from '../../../server/trpc/context';
import { appRouter } from '../../../server/main/app-router';
import { figure, secondsSince } from '../helpers/figures';
import { dealChats } from '../../../server/messenger/schema';
import { seedWorld } from '../helpers/world';
import { commandContext } from '../../../server/platform/command-context';

/**
 * Fuzzing of every tRPC procedure (enumerated from appRouter._def.procedures) through the real HTTP
 * adapter (fetchRequestHandler + superjson, the code behind app/api/trpc), signed in as pin_manager
 * (the ops-only actions as ops, so that their input handling is reached too; an investor's procedures
 * every other call as an investor with deals of its own; rewards.mine as an agent). Inputs from fast-check:
 * wrong types, nulls and undefined, NaN/±Infinity, huge and unicode strings, deep nesting, extra
 * fields, dates and bigints, mutations of plausible inputs built from the input schema (real ids of
 * the fuzz database, enum values), and raw requests (broken JSON, wrong method, huge bodies).
 * Every answer must be a 2xx or a typed 4xx tRPC error — never a 5xx — and a rejected call must not
 * have written a row (checked by the transaction-id horizon, then by a content hash of every table).
 */

const TYPED_CODES = new Set([
  'BAD_REQUEST', 'PARSE_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'METHOD_NOT_SUPPORTED', 'CONFLICT',
  'PRECONDITION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNPROCESSABLE_CONTENT', 'TOO_MANY_REQUESTS',
]);
/** the ops dashboard's actions are for ops only (every other role gets FORBIDDEN before the input is read) */
const OPS_ONLY = /^ops\.dashboard\.(releaseHold|runJobNow|pauseJob|resumeJob|requeueDlq|discardDlq|requeueDlqMany|discardDlqMany|repairReconciliation|repairDivergence)$/;
/**
 * what an investor may call on its own deals: every other call of these is made as the investor (its
 * scope's queries and locks are reached with hostile input too); the rest as pin_manager
 */
const INVESTOR_TOO = /^(booking\.(create|cancel|uploadContract|uploadReceipt|list|byId|programs)|deal\.(list|byId)|messenger\.chat|ops\.bookingTimeline|chessboard\.(projects|grid|object))$/;
/** tables whose rows a rejected call may legitimately write: a failed sign-in is recorded (rate limits) */
const WRITES_ON_REJECT: Record<string, string[]> = { 'auth.signIn': ['auth.login_attempts'] };

const safeJson = (v: unknown) => {
  try { return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x)) ?? String(v); } catch { return String(v); }
};

interface ProcedureDef { _def: { type: 'query' | 'mutation'; inputs: unknown[] } }
interface ZodLike { _zod?: { def?: Record<string, unknown> & { type?: string } } ; shape?: Record<string, unknown>; options?: unknown[] }

/** Keys of an object input and, for enum/literal fields, their values (zod 4 introspection, best effort). */
function inputShape(schema: unknown): { keys: string[]; enums: Record<string, unknown[]> } {
  const keys = new Set<string>();
  const enums: Record<string, unknown[]> = {};
  const unwrap = (s: unknown): ZodLike | undefined => {
    let z = s as ZodLike | undefined;
    for (let i = 0; i < 5 && z?._zod?.def && ['default', 'optional', 'nullable', 'prefault', 'pipe'].includes(z._zod.def.type ?? ''); i++) {
      z = (z._zod.def.innerType ?? z._zod.def.in) as ZodLike;
    }
    return z;
  };
  const visit = (s: unknown) => {
    const z = unwrap(s);
    const def = z?._zod?.def;
    if (!def) return;
    if (def.type === 'object') {
      for (const [k, v] of Object.entries((def.shape as Record<string, unknown>) ?? {})) {
        keys.add(k);
        const inner = unwrap(v)?._zod?.def;
        if (inner?.type === 'enum') enums[k] = Object.values(inner.entries as Record<string, unknown>);
        if (inner?.type === 'literal') enums[k] = [...(inner.values as unknown[])];
        if (inner?.type === 'array') {
          const el = unwrap(inner.element)?._zod?.def;
          if (el?.type === 'enum') enums[k] = [Object.values(el.entries as Record<string, unknown>)];
        }
      }
    } else if (def.type === 'union') {
      for (const o of (def.options as unknown[]) ?? []) visit(o);
    }
  };
  visit(schema);
  return { keys: [...keys], enums };
}

export async function trpcFuzzScenario(t: TestContext, opts: { runsPerProcedure: number; seed: number; label: string }): Promise<void> {
  const { sql, db } = t.database;
  const world = await seedWorld(t.database, 12);
  const pin = await insertUser(db, 'pin_manager', null);
  const ops = await insertUser(db, 'ops', null);
  const investor = await insertUser(db, 'investor', null);
  const agent = await insertUser(db, 'agent', world.tenantId);
  // the investor's deals: the second half of the fuzz deals (the first six get pin_manager's bookings below)
  await sql`UPDATE crm.deals SET investor_id = ${investor.id} WHERE id = ANY(${world.dealIds.slice(6)}::uuid[])`;
  const bookingIds: string[] = [];
  for (let i = 0; i < 6; i++) {
    const b = await db.transaction((tx) => createBookingCommand(tx, { dealId: world.dealIds[i]!, propertyObjectId: world.objectIds[i]!, programId: world.programId }, commandContext(pin.actor, randomUUID())));
    bookingIds.push(b.id);
  }
  // requisite sets (profile, #23): two of the fuzz tenant, so setId fields hit real rows
  const setIds: string[] = [];
  for (let i = 0; i < 2; i++) setIds.push((await seedRequisiteSet(t, pin.actor, undefined, world.tenantId)).id);
  // the deal chats of those bookings, as the messenger consumer opens them: messenger.post/chat reach their real path
  await db.insert(dealChats).values(world.dealIds.slice(0, 6).map((dealId) => ({ dealId, tenantId: world.tenantId, agentId: null })));
  const knownIds = [...world.objectIds.slice(0, 8), ...world.dealIds.slice(0, 8), ...bookingIds, ...setIds, world.projectId, world.buildingId, world.programId, world.tenantId, pin.id, investor.id, agent.id];
  const tables = (await sql<{ t: string }[]>`
    SELECT table_schema || '.' || table_name AS t FROM information_schema.tables
     WHERE table_schema IN ('crm', 'chessboard', 'catalog', 'ops', 'auth', 'profile', 'messenger', 'notifications', 'rewards') AND table_type = 'BASE TABLE' ORDER BY 1`).map((r) => r.t);

  const fingerprint = async (except: string[] = []): Promise<Record<string, string>> => {
    const parts = tables.filter((tb) => !except.includes(tb)).map((tb) => `SELECT '${tb}' AS t, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM ${tb} x`);
    const rows = await sql.unsafe<{ t: string; h: string }[]>(parts.join(' UNION ALL '));
    return Object.fromEntries(rows.map((r) => [r.t, r.h]));
  };
  /** the next transaction id: unchanged ⇒ nothing was written (a rolled-back write also moves it, hence the hash) */
  const xidHorizon = async () => (await sql<{ x: string }[]>`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x`)[0]!.x;

  const procedures = Object.entries((appRouter as unknown as { _def: { procedures: Record<string, ProcedureDef> } })._def.procedures);
  const actorFor = (path: string): Actor => {
    if (OPS_ONLY.test(path)) return ops.actor;
    if (path === 'rewards.mine') return agent.actor; // an agent's own page: every other role is FORBIDDEN before the input
    return INVESTOR_TOO.test(path) && results.calls % 2 === 1 ? investor.actor : pin.actor;
  };

  // ---- generated values
  const hugeString = fc.constantFrom('a'.repeat(100_000), '💥'.repeat(20_000), 'é\u0301'.repeat(10_000), '\u0000'.repeat(1000));
  const nasty = fc.constantFrom('', ' ', '\t\n', '\u0000', '\u202e', '𝕏', 'Ω≈ç√∫', "'; DROP TABLE crm.bookings; --", '<script>alert(1)</script>', '../../etc/passwd',
    '%00', '${process.env}', '{"$gt": ""}', 'null', 'undefined', 'NaN', '-1', '1e309', '00000000-0000-0000-0000-000000000000', 'ZZZZZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZZZZZZZZZ');
  const leaf: fc.Arbitrary<unknown> = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(null, undefined, true, false) },
    { weight: 3, arbitrary: fc.integer() },
    { weight: 2, arbitrary: fc.constantFrom(NaN, Infinity, -Infinity, -0, 2 ** 53 + 1, -(2 ** 31), 1e308, 0.1) },
    { weight: 2, arbitrary: fc.double() },
    { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }) },
    { weight: 3, arbitrary: nasty },
    { weight: 1, arbitrary: hugeString },
    { weight: 3, arbitrary: fc.uuid() },
    { weight: 4, arbitrary: fc.constantFrom(...knownIds) },
    { weight: 1, arbitrary: fc.date({ noInvalidDate: false }) },
    { weight: 1, arbitrary: fc.bigInt() },
  );
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true },
      { weight: 6, arbitrary: leaf },
      { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 5 }) },
      { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 10 }), tie('value'), { maxKeys: 5 }) }),
  }));

  const results = { calls: 0, ok: 0, rejected: 0, byCode: {} as Record<string, number>, status5xx: [] as string[], untyped: [] as string[], wroteOnReject: [] as string[] };
  const t0 = Date.now();
  const timings: [string, number][] = [];
  let current = await fingerprint();
  let horizon = await xidHorizon();

  for (const [path, proc] of procedures) {
    const { type, inputs } = proc._def;
    const { keys, enums } = inputShape(inputs[0]);
    if (path === 'ops.dashboard.runJobNow') delete enums.job; // a valid job name would run that job for real, 1,000 times
    const plausible = (k: string): fc.Arbitrary<unknown> => (enums[k] ? fc.oneof(fc.constantFrom(...enums[k]), leaf) : leaf);
    const structured = keys.length
      ? fc.record(Object.fromEntries(keys.map((k) => [k, plausible(k)])), { requiredKeys: [] })
      : fc.constant(undefined);
    const withExtra = fc.tuple(structured, fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), value, { maxKeys: 3 }))
      .map(([a, extra]) => (a && typeof a === 'object' ? { ...extra, ...a } : { ...extra }));
    type Req = { kind: 'input'; input: unknown } | { kind: 'raw'; method: string; body?: string; query?: string };
    const raw: fc.Arbitrary<Req> = fc.oneof(
      fc.constant<Req>({ kind: 'raw', method: 'POST', body: '{"json": ' }),
      fc.constant<Req>({ kind: 'raw', method: 'POST', body: '[1,2,3]' }),
      fc.constant<Req>({ kind: 'raw', method: 'POST', body: JSON.stringify({ json: 'x'.repeat(2_000_000) }) }),
      fc.constant<Req>({ kind: 'raw', method: type === 'query' ? 'POST' : 'GET' }),
      fc.constant<Req>({ kind: 'raw', method: 'GET', query: 'input=%7Bbroken' }),
      fc.constant<Req>({ kind: 'raw', method: 'PUT', body: '{}' }),
      fc.string({ maxLength: 200 }).map<Req>((body) => ({ kind: 'raw', method: 'POST', body })),
    );
    const request: fc.Arbitrary<Req> = fc.oneof(
      { weight: 4, arbitrary: structured.map<Req>((input) => ({ kind: 'input', input })) },
      { weight: 2, arbitrary: withExtra.map<Req>((input) => ({ kind: 'input', input })) },
      { weight: 2, arbitrary: value.map<Req>((input) => ({ kind: 'input', input })) },
      { weight: 1, arbitrary: raw },
    );

    const one = async (req: Req) => {
      const url = new URL(`http://localhost/api/trpc/${path}`);
      let httpReq: Request;
      if (req.kind === 'input') {
        // superjson refuses to serialize keys such as "constructor" / "__proto__"; a hostile client sends them raw
        let body: string;
        try { body = JSON.stringify(superjson.serialize(req.input)); } catch { body = `{"json":${safeJson(req.input) ?? 'null'},"meta":{"values":{"x":["undefined"]}}}`; }
        if (type === 'query') {
          url.searchParams.set('input', body);
          httpReq = new Request(url, { method: 'GET' });
        } else {
          httpReq = new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        }
      } else {
        if (req.query) url.search = req.query;
        httpReq = new Request(url, { method: req.method, headers: { 'content-type': 'application/json' }, body: req.method === 'GET' ? undefined : req.body });
      }
      const response = await fetchRequestHandler({
        endpoint: '/api/trpc',
        req: httpReq,
        router: appRouter,
        createContext: () => createContextFor({ database: t.database, env: t.env, logger: t.logger }, actorFor(path), { setCookie: () => {}, ip: `10.${Math.floor(Math.random() * 250)}.0.1` }),
      });
      const text = await response.text();
      results.calls++;
      const show = `${path} ${response.status} ${safeJson(req).slice(0, 200)} → ${text.slice(0, 200)}`;
      if (response.status >= 500) results.status5xx.push(show);
      let code: string | undefined;
      if (response.status >= 400) {
        results.rejected++;
        try {
          const body = JSON.parse(text) as { error?: { json?: { data?: { code?: string; httpStatus?: number } } } };
          code = body.error?.json?.data?.code;
          if (!code || !TYPED_CODES.has(code) || body.error?.json?.data?.httpStatus !== response.status) results.untyped.push(show);
        } catch {
          results.untyped.push(show);
        }
        results.byCode[code ?? `HTTP ${response.status}`] = (results.byCode[code ?? `HTTP ${response.status}`] ?? 0) + 1;
      } else {
        results.ok++;
      }
      // no row written by a rejected call
      const next = await xidHorizon();
      if (next !== horizon) {
        const after = await fingerprint();
        if (response.status >= 400) {
          const allowed = WRITES_ON_REJECT[path] ?? [];
          const changed = Object.keys(after).filter((tb) => after[tb] !== current[tb] && !allowed.includes(tb));
          if (changed.length) results.wroteOnReject.push(`${show} wrote ${changed.join(', ')}`);
        }
        current = after;
        horizon = await xidHorizon();
      }
    };

    const runs = opts.runsPerProcedure;
    const p0 = Date.now();
    await fc.assert(fc.asyncProperty(request, async (req) => { await one(req); }), { numRuns: runs, seed: opts.seed, endOnFailure: true });
    timings.push([path, Date.now() - p0]);
  }

  const worst = (xs: string[]) => xs.slice(0, 5).join('\n');
  figure('trpc-fuzz', `${opts.label}: ${procedures.length} procedures × ${opts.runsPerProcedure} generated requests = ${results.calls} calls (seed ${opts.seed}) — `
    + `${results.ok} accepted, ${results.rejected} rejected (${Object.entries(results.byCode).sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`).join(', ')}); `
    + `5xx: ${results.status5xx.length}, untyped errors: ${results.untyped.length}, rejected calls that wrote a row: ${results.wroteOnReject.length} (${secondsSince(t0)} s; slowest ${[...timings].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([p, ms]) => `${p} ${ms} ms`).join(', ')})`,
  { slowest: timings.sort((a, b) => b[1] - a[1]).slice(0, 5), procedures: procedures.length, calls: results.calls, ok: results.ok, rejected: results.rejected, byCode: results.byCode, status5xx: results.status5xx.length, untyped: results.untyped.length, wroteOnReject: results.wroteOnReject.length, seed: opts.seed });

  expect(results.status5xx, worst(results.status5xx)).toEqual([]);
  expect(results.untyped, worst(results.untyped)).toEqual([]);
  expect(results.wroteOnReject, worst(results.wroteOnReject)).toEqual([]);
  expect(results.calls).toBe(procedures.length * opts.runsPerProcedure);
}
