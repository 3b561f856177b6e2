import { describe, expect, it } from 'vitest';
import { parseEnv } from '@/server/main/env';
import { scheduleWords } from './schedule-words';

const JUNE = Date.UTC(2026, 5, 15, 12);

describe('scheduleWords', () => {
  it.each([
    ['*/10 * * * * *', 'UTC', 'каждые 10 с', 'every 10 s'],
    ['*/5 * * * * *', 'UTC', 'каждые 5 с', 'every 5 s'],
    ['* * * * * *', 'UTC', 'каждую секунду', 'every second'],
    ['0 * * * * *', 'UTC', 'каждую минуту', 'every minute'],
    ['30 * * * * *', 'UTC', 'каждую минуту, на 30-й секунде', 'every minute at :30'],
    ['0 */5 * * * *', 'UTC', 'каждые 5 мин', 'every 5 min'],
    ['0 15 * * * *', 'UTC', 'каждый час в :15', 'every hour at :15'],
    ['0 30 3 * * *', 'Europe/Moscow', 'ежедневно в 03:30 МСК', 'daily at 03:30 MSK'],
    ['30 3 * * *', 'UTC', 'ежедневно в 06:30 МСК', 'daily at 06:30 MSK'],
    ['0 45 3 * * *', 'Etc/UTC', 'ежедневно в 06:45 МСК', 'daily at 06:45 MSK'],
    ['0 0 22 * * *', 'UTC', 'ежедневно в 01:00 МСК', 'daily at 01:00 MSK'],
    ['15 0 12 * * *', 'Asia/Tokyo', 'ежедневно в 06:00:15 МСК', 'daily at 06:00:15 MSK'],
    ['0 0 3 * * *', 'Nowhere/Unknown', 'ежедневно в 03:00 Nowhere/Unknown', 'daily at 03:00 Nowhere/Unknown'],
  ])('%s (%s) → "%s" / "%s"', (expr, tz, ru, en) => {
    expect(scheduleWords(expr, tz, 'ru', JUNE)).toBe(ru);
    expect(scheduleWords(expr, tz, 'en', JUNE)).toBe(en);
  });

  it('daily times of zones with summer time follow the day they are told on', () => {
    expect(scheduleWords('0 0 3 * * *', 'Europe/Berlin', 'en', JUNE)).toBe('daily at 04:00 MSK');
    expect(scheduleWords('0 0 3 * * *', 'Europe/Berlin', 'en', Date.UTC(2026, 0, 15))).toBe('daily at 05:00 MSK');
  });

  it('the default daily jobs, scheduled in Moscow and in UTC, are told in one zone', () => {
    const env = parseEnv({ DATABASE_URL: 'postgres://x@localhost/x', KAFKA_BROKERS: 'localhost:9092' });
    const retention = scheduleWords(env.DELISTED_RETENTION_SCHEDULE, env.DELISTED_RETENTION_TIMEZONE, 'ru', JUNE)!;
    const notifications = scheduleWords(env.NOTIFICATIONS_RETENTION_SCHEDULE, 'UTC', 'ru', JUNE)!;
    expect([retention, notifications]).toEqual(['ежедневно в 03:30 МСК', 'ежедневно в 06:45 МСК']);
  });

  it.each(['0 0 * * 1 *', '0 0 1 1 * *', '1-5 * * * * *', 'nonsense', '0 0 0 0'])('%s is not put in words (null: the page shows it raw)', (expr) => {
    expect(scheduleWords(expr, 'UTC', 'ru')).toBeNull();
  });

  it('every default schedule of the jobs is put in words', () => {
    const env = parseEnv({ DATABASE_URL: 'postgres://x@localhost/x', KAFKA_BROKERS: 'localhost:9092' });
    for (const [key, value] of Object.entries(env)) {
      if (key.endsWith('_SCHEDULE')) expect(scheduleWords(String(value), 'UTC', 'ru'), key).not.toBeNull();
    }
  });
});
