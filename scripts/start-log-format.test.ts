import { describe, expect, it } from 'vitest';
import { startLogFormat } from './stack';

describe('npm start: the log format of web and worker', () => {
  it('pretty on a terminal, json when piped; LOG_FORMAT wins and is validated', () => {
    expect(startLogFormat(undefined, true)).toBe('pretty');
    expect(startLogFormat('', true)).toBe('pretty');
    expect(startLogFormat(undefined, false)).toBe('json');
    expect(startLogFormat('json', true)).toBe('json');
    expect(startLogFormat('pretty', false)).toBe('pretty');
    expect(() => startLogFormat('xml', true)).toThrow(/invalid configuration: LOG_FORMAT/);
  });
});
