// Child process of process-guards.test.ts: installs the worker's guards, leaves one promise rejected with
// nobody awaiting it (argv[2] says with what), and exits 0 if it is still alive 300 ms later.
import { createLogger } from './logger';
import { installWorkerProcessGuards } from './process-guards';

installWorkerProcessGuards(createLogger('worker', { level: 'info' }));
// postgres.js's connection error, as its `Errors.connection('CONNECTION_CLOSED', …)` builds it
const closed = Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED', errno: 'CONNECTION_CLOSED' });
void Promise.reject(process.argv[2] === 'closed-connection' ? closed : new Error('a bug'));
setTimeout(() => process.exit(0), 300);
