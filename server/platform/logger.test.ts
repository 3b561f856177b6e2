import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EnvError, parseEnvWith, platformEnvSchema } from './env';
import { createCapturingLogger, createLogger, prettyLine } from './logger';

const base = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', KAFKA_BROKERS: '127.0.0.1:9092' };

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let out = '';
  stream.on('data', (d) => (out += d));
  return { stream, text: () => out };
}

describe('log format', () => {
  it('LOG_FORMAT is json by default, pretty on request, anything else stops the process with its name', () => {
    expect(parseEnvWith(platformEnvSchema, base).LOG_FORMAT).toBe('json');
    expect(parseEnvWith(platformEnvSchema, { ...base, LOG_FORMAT: 'pretty' }).LOG_FORMAT).toBe('pretty');
    expect(() => parseEnvWith(platformEnvSchema, { ...base, LOG_FORMAT: 'text' })).toThrow(EnvError);
    expect(() => parseEnvWith(platformEnvSchema, { ...base, LOG_FORMAT: 'text' })).toThrow(/LOG_FORMAT/);
  });

  it('json writes one JSON object per line with level, time, msg and service', async () => {
    const { stream, text } = capture();
    createLogger('worker', { level: 'info', format: 'json', destination: stream }).info({ jobs: 2 }, 'worker started');
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(text())).toMatchObject({ level: 'info', msg: 'worker started', service: 'worker', jobs: 2, time: expect.any(String) });
  });

  it('pretty writes one readable line per event: time, level word, service, message, fields', async () => {
    const { stream, text } = capture();
    const logger = createLogger('worker', { level: 'info', format: 'pretty', destination: stream });
    logger.info({ consumer: 'crm.property-object-projection', partitions: [0, 1] }, 'consumer started');
    logger.error({ err: new Error('disk full') }, 'job cycle failed');
    await new Promise((r) => setImmediate(r));
    const lines = text().split('\n');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} {2}INFO {3}worker {2}consumer started {2}consumer=crm\.property-object-projection {2}partitions=\[0,1\]$/);
    expect(lines[1]).toMatch(/ERROR {2}worker {2}job cycle failed {2}err=disk full/);
    expect(lines[2]).toMatch(/^ {4}at /); // the stack, indented under its line
    expect(text()).not.toContain('{"level"');
  });

  it("a job cycle's correlationId (its runId) is said once", () => {
    const line = prettyLine(JSON.stringify({ level: 'info', time: '2026-12-03T18:20:19.040Z', service: 'worker', msg: 'cycle started', runId: 'r1', correlationId: 'r1' }));
    expect(line).toBe('18:20:19.040  INFO   worker  cycle started  runId=r1\n');
    expect(prettyLine(JSON.stringify({ level: 'info', msg: 'x', runId: 'r1', correlationId: 'c2' }))).toContain('correlationId=c2');
  });

  it('a line that is not JSON passes through as it is', () => {
    expect(prettyLine('plain text')).toBe('plain text\n');
  });
});

describe('kafkajs lines', () => {
  it('its two start-up notices of our producer configuration are debug; any other warning stays a warning', async () => {
    const { createKafka } = await import('./kafka/client');
    const { logger, lines } = createCapturingLogger('worker', 'debug');
    const kafka = createKafka({ KAFKA_BROKERS: '127.0.0.1:1', KAFKA_CLIENT_ID: 'test' }, logger);
    const log = (kafka as unknown as { logger(): { namespace(n: string): { warn(m: string, extra?: object): void } } }).logger().namespace('test');
    log.warn('KafkaJS v2.0.0 switched default partitioner. To retain the same partitioning behavior…');
    log.warn('Limiting retries for the idempotent producer may invalidate EoS guarantees');
    log.warn('Connection timeout', { broker: '127.0.0.1:1' });
    expect(lines().map((l) => [l.level, String(l.msg).slice(0, 20)])).toEqual([
      ['debug', 'KafkaJS v2.0.0 switc'], ['debug', 'Limiting retries for'], ['warn', 'Connection timeout'],
    ]);
  });
});
