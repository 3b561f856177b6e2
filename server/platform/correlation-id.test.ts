import { describe, expect, it } from 'vitest';
import { anyEnvelopeSchema } from '../contracts/envelope';
import { correlationIdOf } from './correlation-id';

describe('correlationIdOf', () => {
  it('keeps a uuid as given', () => {
    expect(correlationIdOf('0b7c9a3e-2f1d-4c5b-9e8a-7d6c5b4a3f21')).toBe('0b7c9a3e-2f1d-4c5b-9e8a-7d6c5b4a3f21');
  });

  it.each([undefined, null, '', 'req-42', '------------------------------------', '0b7c9a3e2f1d4c5b9e8a7d6c5b4a3f21'])(
    'replaces %j by a fresh uuid the envelope accepts',
    (given) => {
      const id = correlationIdOf(given);
      expect(id).not.toBe(given);
      expect(anyEnvelopeSchema.shape.correlationId.safeParse(id).success).toBe(true);
    },
  );

  it('makes a new id per call', () => {
    expect(correlationIdOf(undefined)).not.toBe(correlationIdOf(undefined));
  });
});
