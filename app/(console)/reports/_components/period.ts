/**
 * The report period in the URL: `period=week|month|custom`, and for custom `from` / `to` as calendar
 * days (YYYY-MM-DD, both included) in the user's time zone. The server gets instants: the first day's
 * local midnight and the local midnight after the last day (exclusive end).
 */
export const PERIOD_KINDS = ['week', 'month', 'custom'] as const;
export type PeriodKind = (typeof PERIOD_KINDS)[number];

/** the server's limit (server/reports/input.ts REPORT_MAX_DAYS) */
export const MAX_DAYS = 366;

export interface Period {
  kind: PeriodKind;
  /** first day and last day, both included, YYYY-MM-DD local */
  fromDay: string;
  toDay: string;
  from: Date;
  /** exclusive */
  to: Date;
  /** why a custom period cannot be asked for (nothing is sent then) */
  error: 'missing' | 'order' | 'tooLong' | null;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

export function dayString(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** YYYY-MM-DD → local midnight, or null for anything else (including 2031-02-30) */
export function parseDay(s: string | null | undefined): Date | null {
  const m = s ? DAY.exec(s) : null;
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return dayString(d) === s ? d : null;
}

const addDays = (d: Date, n: number) => new Date(d.getFullYear(), d.getMonth(), d.getDate() + n);

/** This week (Monday to Sunday), this month, or the days in the URL. */
export function periodOf(params: { period?: string | null; from?: string | null; to?: string | null }, now: Date): Period {
  const kind: PeriodKind = (PERIOD_KINDS as readonly string[]).includes(params.period ?? '') ? (params.period as PeriodKind) : 'month';
  const today = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  if (kind === 'week') {
    const monday = addDays(today, -((today.getDay() + 6) % 7));
    return { kind, from: monday, to: addDays(monday, 7), fromDay: dayString(monday), toDay: dayString(addDays(monday, 6)), error: null };
  }
  if (kind === 'month') {
    const first = new Date(today.getFullYear(), today.getMonth(), 1);
    const next = new Date(today.getFullYear(), today.getMonth() + 1, 1);
    return { kind, from: first, to: next, fromDay: dayString(first), toDay: dayString(addDays(next, -1)), error: null };
  }
  const from = parseDay(params.from);
  const last = parseDay(params.to);
  const fromDay = params.from ?? '';
  const toDay = params.to ?? '';
  if (!from || !last) return { kind, from: today, to: addDays(today, 1), fromDay, toDay, error: 'missing' };
  const to = addDays(last, 1);
  if (to.getTime() <= from.getTime()) return { kind, from, to, fromDay, toDay, error: 'order' };
  // calendar days, not 24-hour blocks: a period across a daylight-saving change is still whole days
  const days = Math.round((Date.UTC(last.getFullYear(), last.getMonth(), last.getDate()) - Date.UTC(from.getFullYear(), from.getMonth(), from.getDate())) / 86_400_000) + 1;
  if (days > MAX_DAYS) return { kind, from, to, fromDay, toDay, error: 'tooLong' };
  return { kind, from, to, fromDay, toDay, error: null };
}
