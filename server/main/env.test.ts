import { describe, expect, it } from 'vitest';
import { EnvError, platformEnvShape } from '../platform/env';
import { CONTEXT_ENV_SHAPES, envSchema, parseEnv } from './env';

const base = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', KAFKA_BROKERS: '127.0.0.1:9092' };

describe('env', () => {
  it('applies the specs\' defaults', () => {
    const env = parseEnv(base);
    expect(env.HOLD_EXPIRATION_GRACE_MS).toBe(600_000);
    expect(env.HOLD_EXPIRATION_BATCH_SIZE).toBe(200);
    expect(env.DELISTED_RETENTION_SCHEDULE).toBe('0 30 3 * * *');
    expect(env.DELISTED_RETENTION_TIMEZONE).toBe('Europe/Moscow');
    expect(env.DELISTED_RETENTION_BATCH_SIZE).toBe(2000);
    expect(env.DELISTED_RETENTION_MAX_BATCHES_PER_RUN).toBe(100);
    expect(env.DELISTED_RETENTION_PERIOD_MS).toBe(30 * 24 * 3600_000);
    expect(env.WORKER_METRICS_PORT).toBe(9464);
    expect(env.KAFKA_TOPIC_PREFIX).toBe('');
  });
  it('PROFILE_DATA_KEY: optional outside production (a dev key), required in production, 32 bytes of base64', () => {
    expect(parseEnv(base).PROFILE_DATA_KEY).toBe('');
    expect(() => parseEnv({ ...base, NODE_ENV: 'production' })).toThrow(/PROFILE_DATA_KEY is required in production/);
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(parseEnv({ ...base, NODE_ENV: 'production', PROFILE_DATA_KEY: key }).PROFILE_DATA_KEY).toBe(key);
    expect(() => parseEnv({ ...base, PROFILE_DATA_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/PROFILE_DATA_KEY base64 of 32 bytes/);
    expect(() => parseEnv({ ...base, PROFILE_DATA_OLD_KEYS: 'k0' })).toThrow(/PROFILE_DATA_OLD_KEYS/);
  });
  it('production with PROFILE_DATA_KEY empty is refused with the same one line as when it is unset', () => {
    expect(() => parseEnv({ ...base, NODE_ENV: 'production', PROFILE_DATA_KEY: '' }))
      .toThrow(/^invalid configuration: PROFILE_DATA_KEY is required in production \(base64 of 32 bytes\)$/);
  });
  it('names a missing variable', () => {
    expect(() => parseEnv({ KAFKA_BROKERS: '127.0.0.1:9092' })).toThrow(/DATABASE_URL is required/);
  });
  it.each([
    ['HOLD_EXPIRATION_BATCH_SIZE', '0'],
    ['HOLD_EXPIRATION_BATCH_SIZE', '-5'],
    ['HOLD_EXPIRATION_GRACE_MS', 'ten'],
    ['DELISTED_RETENTION_BATCH_SIZE', '10001'],
    ['KAFKA_BROKERS', 'not a broker'],
    ['WORKER_METRICS_PORT', '70000'],
    // under 26 h a daily job's runs would be pruned before the alert that it has not run could see them
    ['JOB_RUNS_RETENTION_MS', String(24 * 3600_000)],
  ])('rejects %s=%s with a line naming it', (name, value) => {
    try {
      parseEnv({ ...base, [name]: value });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(EnvError);
      expect((e as Error).message).toMatch(new RegExp(`^invalid configuration: ${name} `));
      expect((e as Error).message.split('\n')).toHaveLength(1);
    }
  });
});

describe('.env.example', () => {
  it('documents every variable of the schema with its default', async () => {
    const fs = await import('node:fs');
    const text = fs.readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const documented = new Map(
      text.split('\n').map((l) => l.replace(/^#\s*/, '')).filter((l) => /^[A-Z_]+=/.test(l)).map((l) => [l.split('=')[0], l.slice(l.indexOf('=') + 1).split(/\s{2,}/)[0]] as const),
    );
    const defaults = envSchema.parse({ DATABASE_URL: 'postgres://x@h:1/d', KAFKA_BROKERS: 'h:1' });
    for (const name of Object.keys(envSchema.shape)) {
      expect(documented.has(name), name).toBe(true);
      if (name !== 'DATABASE_URL' && name !== 'KAFKA_BROKERS') expect(documented.get(name), name).toBe(String(defaults[name as keyof typeof defaults]));
    }
  });
});

describe('the composed schema', () => {
  it('holds every context\'s slice, field for field', () => {
    for (const [context, shape] of Object.entries(CONTEXT_ENV_SHAPES)) {
      for (const [name, field] of Object.entries(shape)) expect(envSchema.shape[name as keyof typeof envSchema.shape], `${context}: ${name}`).toBe(field);
    }
  });
  it('holds platform\'s settings, field for field', () => {
    for (const [name, field] of Object.entries(platformEnvShape)) expect(envSchema.shape[name as keyof typeof envSchema.shape], name).toBe(field);
  });
  it('has no setting of its own and none owned twice: it is exactly platform\'s and the slices\' keys, each once', () => {
    const owned = [platformEnvShape, ...Object.values(CONTEXT_ENV_SHAPES)].flatMap((shape) => Object.keys(shape));
    expect(new Set(owned).size).toBe(owned.length);
    expect([...owned].sort()).toEqual(Object.keys(envSchema.shape).sort());
  });
});
