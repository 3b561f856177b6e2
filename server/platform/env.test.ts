import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EnvError, parseEnvWith, platformEnvSchema } from './env';

const base = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', KAFKA_BROKERS: '127.0.0.1:9092' };

describe('parseEnvWith', () => {
  it('applies platform\'s defaults', () => {
    const env = parseEnvWith(platformEnvSchema, base);
    expect(env.WORKER_METRICS_PORT).toBe(9464);
    expect(env.KAFKA_TOPIC_PREFIX).toBe('');
    expect(env.JOB_RUNS_RETENTION_MS).toBe(30 * 24 * 3600_000);
  });
  it('names a missing variable', () => {
    expect(() => parseEnvWith(platformEnvSchema, { KAFKA_BROKERS: '127.0.0.1:9092' })).toThrow(/^invalid configuration: DATABASE_URL is required$/);
  });
  it('writes one line per bad variable, each with the value it got', () => {
    const schema = z.object({ A: z.coerce.number().int().positive(), B: z.enum(['x', 'y'], 'x or y') });
    try {
      parseEnvWith(schema, { A: '0', B: 'z' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(EnvError);
      expect((e as Error).message.split('\n')).toEqual([
        expect.stringMatching(/^invalid configuration: A .* \(got "0"\)$/),
        'invalid configuration: B x or y (got "z")',
      ]);
    }
  });
});
