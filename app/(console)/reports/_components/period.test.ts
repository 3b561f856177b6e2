import { describe, expect, it } from 'vitest';
import { periodOf, parseDay } from './period';

describe('report period', () => {
  const now = new Date(2031, 4, 15, 13, 30); // Thursday 15 May 2031, local time

  it('this week runs Monday to Sunday, the end exclusive at the next Monday', () => {
    const p = periodOf({ period: 'week' }, now);
    expect([p.fromDay, p.toDay, p.error]).toEqual(['2031-05-12', '2031-05-18', null]);
    expect(p.from).toEqual(new Date(2031, 4, 12));
    expect(p.to).toEqual(new Date(2031, 4, 19));
    // a Sunday belongs to the week that began six days before
    expect(periodOf({ period: 'week' }, new Date(2031, 4, 18, 23, 59)).fromDay).toBe('2031-05-12');
  });

  it('this month (the default) is the calendar month', () => {
    for (const p of [periodOf({ period: 'month' }, now), periodOf({}, now), periodOf({ period: 'nonsense' }, now)]) {
      expect([p.kind, p.fromDay, p.toDay]).toEqual(['month', '2031-05-01', '2031-05-31']);
      expect(p.to).toEqual(new Date(2031, 5, 1));
    }
  });

  it('a custom period takes both days and refuses a missing, reversed or over-long one', () => {
    const ok = periodOf({ period: 'custom', from: '2031-01-01', to: '2031-01-31' }, now);
    expect([ok.error, ok.from, ok.to]).toEqual([null, new Date(2031, 0, 1), new Date(2031, 1, 1)]);
    expect(periodOf({ period: 'custom', from: '2031-01-05', to: '2031-01-05' }, now).error).toBeNull();
    expect(periodOf({ period: 'custom', from: '2031-01-01' }, now).error).toBe('missing');
    expect(periodOf({ period: 'custom', from: '2031-02-30', to: '2031-03-01' }, now).error).toBe('missing');
    expect(periodOf({ period: 'custom', from: '2031-02-01', to: '2031-01-31' }, now).error).toBe('order');
    expect(periodOf({ period: 'custom', from: '2031-01-01', to: '2032-01-01' }, now).error).toBeNull(); // 366 days
    expect(periodOf({ period: 'custom', from: '2031-01-01', to: '2032-01-02' }, now).error).toBe('tooLong');
  });

  it('reads only real calendar days', () => {
    expect(parseDay('2032-02-29')).toEqual(new Date(2032, 1, 29));
    expect(parseDay('2031-02-29')).toBeNull();
    expect(parseDay('31.01.2031')).toBeNull();
    expect(parseDay(null)).toBeNull();
  });
});
