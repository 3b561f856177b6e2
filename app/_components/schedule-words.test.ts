import { describe, expect, it } from 'vitest';
import { parseEnv } from '@/server/platform/env';
import { scheduleWords } from './schedule-words';

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
    ['30 3 * * *', 'UTC', 'ежедневно в 03:30 UTC', 'daily at 03:30 UTC'],
    ['15 0 12 * * *', 'Asia/Tokyo', 'ежедневно в 12:00:15 Asia/Tokyo', 'daily at 12:00:15 Asia/Tokyo'],
  ])('%s (%s) → "%s" / "%s"', (expr, tz, ru, en) => {
    expect(scheduleWords(expr, tz, 'ru')).toBe(ru);
    expect(scheduleWords(expr, tz, 'en')).toBe(en);
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
