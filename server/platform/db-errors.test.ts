import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { isAbandonedSocketReset } from './db';

describe('isAbandonedSocketReset (worker: an uncaught reset of a dropped socket does not end the process)', () => {
  it('is a read ECONNRESET, as Node raises it for a socket with no error listener', async () => {
    // a real reset: once connected, the server answers the client's first bytes with RST (resetAndDestroy)
    const server = net.createServer((s) => s.on('data', () => s.resetAndDestroy()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    const error = await new Promise<Error>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', resolve);
      socket.on('connect', () => socket.write('x'));
    });
    server.close();
    expect(isAbandonedSocketReset(error)).toBe(true);
  });

  it('is not any other error: a refused connection, a plain Error, a write reset', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED', syscall: 'connect' });
    const writeReset = Object.assign(new Error('write ECONNRESET'), { code: 'ECONNRESET', syscall: 'write' });
    expect(isAbandonedSocketReset(refused)).toBe(false);
    expect(isAbandonedSocketReset(writeReset)).toBe(false);
    expect(isAbandonedSocketReset(new Error('read ECONNRESET'))).toBe(false);
    expect(isAbandonedSocketReset(null)).toBe(false);
  });
});
