import { sql, type SQL } from 'drizzle-orm';
import type { Actor } from '../auth/actor';
import { userNames } from '../auth/sign-in';
import type { Db } from '../platform/db';
import { reportScope, type ReportInput } from './input';
import { scopeSql } from './cohort';

/**
 * `GET /api/reports/bookings.csv`: one line per booking created in [from, to), header first, from crm's
 * tables (the same cohort as the funnel). UTF-8 with a byte order mark, so spreadsheet apps read the
 * Cyrillic of deal titles and reasons right; CRLF line ends and RFC 4180 quoting.
 */

export const CSV_COLUMNS = [
  'booking_id', 'created_at', 'status', 'payment_status', 'program', 'paid_program', 'deal_id', 'deal_title',
  'agent_id', 'agent_name', 'project_id', 'property_object_id', 'booked_at', 'booking_expires_at', 'closed_at', 'closed_reason',
] as const;

export const CSV_BOM = '\uFEFF';
const BATCH = 1000;

/**
 * One CSV field. Quoted when it holds a separator, a quote or a line break; a text that a spreadsheet
 * would run as a formula (= + - @ or a tab/CR first) gets a leading apostrophe: deal titles and
 * cancel reasons are typed by people, and a CSV must not be a way to run a formula on a manager's PC.
 */
export function csvField(value: string | number | boolean | null | undefined, text = false, separator: CsvSeparator = ','): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  if (text && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return s.includes(separator) || /["\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * The field separator: a comma (RFC 4180, the default) or a semicolon, which spreadsheet apps set to a
 * Russian (or any decimal-comma) locale expect when they open a CSV by double click.
 */
export type CsvSeparator = ',' | ';';
export const CSV_SEPARATORS = { comma: ',', semicolon: ';' } as const satisfies Record<string, CsvSeparator>;

interface CsvRow {
  id: string; created_at: string; status: string; payment_status: string; program: string; is_paid: boolean;
  deal_id: string; deal_title: string; agent_id: string | null; project_id: string | null; property_object_id: string;
  booked_at: string | null; booking_expires_at: string | null; closed_at: string | null; closed_reason: string | null;
}

/** a timestamptz as ISO 8601 UTC text with milliseconds (the columns' precision), NULL stays NULL */
const isoUtc = (column: SQL) => sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Checks the caller and the input first (throws before anything is sent), then yields the CSV in
 * pieces: keyset pages of BATCH bookings in (created_at, id) order, so a year of bookings is never held
 * in memory at once.
 */
export function bookingsCsv(db: Db, actor: Actor, input: ReportInput, separator: CsvSeparator = ','): AsyncGenerator<string> {
  const scope = reportScope(actor, input);
  const project = input.projectId ? sql`AND po.project_id = ${input.projectId}::uuid` : sql``;
  async function* lines() {
    yield `${CSV_BOM}${CSV_COLUMNS.join(separator)}\r\n`;
    let after: { at: string; id: string } | null = null;
    for (;;) {
      const page: CsvRow[] = await db.execute<CsvRow & Record<string, unknown>>(sql`
        SELECT b.id, ${isoUtc(sql`b.created_at`)} AS created_at,
               b.status, b.payment_status, p.name AS program, p.is_paid, b.deal_id, d.title AS deal_title, d.agent_id,
               po.project_id, b.property_object_id, ${isoUtc(sql`b.booked_at`)} AS booked_at,
               ${isoUtc(sql`b.booking_expires_at`)} AS booking_expires_at, ${isoUtc(sql`b.closed_at`)} AS closed_at, b.closed_reason
        FROM crm.v_bookings b
        JOIN crm.v_deals d ON d.id = b.deal_id
        JOIN crm.v_booking_programs p ON p.id = b.program_id
        LEFT JOIN crm.v_property_objects po ON po.id = b.property_object_id
        WHERE ${scopeSql(scope)}
          AND b.created_at >= ${input.from.toISOString()}::timestamptz AND b.created_at < ${input.to.toISOString()}::timestamptz
          ${project}
          ${after ? sql`AND (b.created_at, b.id) > (${after.at}::timestamptz, ${after.id}::uuid)` : sql``}
        ORDER BY b.created_at, b.id
        LIMIT ${BATCH}`);
      if (page.length === 0) return;
      const agentIds = [...new Set(page.map((r) => r.agent_id).filter((id): id is string => id !== null))];
      const names = await userNames(db, actor, agentIds);
      const f = (value: string | boolean | null | undefined, text = false) => csvField(value, text, separator);
      yield page.map((r) => [
        f(r.id), f(r.created_at), f(r.status), f(r.payment_status), f(r.program, true),
        f(r.is_paid), f(r.deal_id), f(r.deal_title, true), f(r.agent_id),
        f(r.agent_id ? names[r.agent_id] : null, true), f(r.project_id), f(r.property_object_id),
        f(r.booked_at), f(r.booking_expires_at), f(r.closed_at), f(r.closed_reason, true),
      ].join(separator)).join('\r\n') + '\r\n';
      if (page.length < BATCH) return;
      const last = page[page.length - 1]!;
      after = { at: last.created_at, id: last.id };
    }
  }
  return lines();
}

/** `bookings-2026-12-01--2026-12-31.csv` (the last day of the period, not the exclusive end) */
export function csvFileName(input: Pick<ReportInput, 'from' | 'to'>): string {
  const day = (d: Date) => d.toISOString().slice(0, 10);
  return `bookings-${day(input.from)}--${day(new Date(input.to.getTime() - 1))}.csv`;
}
