// Plain JS (no dependencies): fixes of dependency bugs that upstream has not released yet, applied to
// node_modules after every install (package.json "postinstall") and checked by the start/test
// bootstrap. Idempotent; fails loudly when a patched file no longer has the code it expects (an
// upgrade: check whether upstream fixed it, then drop the patch).
//
// postgres 3.4.9 — porsager/postgres#1154, #1208 (fix proposed in #1209, not released): a write
// scheduled with setImmediate runs after the connection closed and calls `socket.write` on null — an
// uncaught TypeError that ends the process (the worker on every PostgreSQL restart; a vitest run that
// terminates a backend). And `closed()` clears the pending immediate without forgetting it, so later
// writes are buffered behind stale bytes and never flushed. Patched: a write to a closed connection
// rejects its queries with CONNECTION_CLOSED (the caller's try/catch sees it), and `closed()` drops
// the stale buffer and timer.
//
// postgres 3.4.9 — pipelined BEGIN (issue #17, booking-commands): `sql.begin` awaited its BEGIN before it
// ran the transaction's first statements, one round trip (a loopback send() and an event-loop turn) of
// its own per transaction. Patched: when the BEGIN went out at once on a connection (the pool had one),
// the transaction's statements are sent right behind it, in the same write; BEGIN's result is checked
// before COMMIT (a failed BEGIN fails the transaction). When the pool had no connection ready, BEGIN is
// awaited as before.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MARKER = '/* pin-patch: porsager/postgres#1208 */';

const POSTGRES = {
  version: '3.4.9',
  files: ['node_modules/postgres/src/connection.js', 'node_modules/postgres/cjs/src/connection.js', 'node_modules/postgres/cf/src/connection.js'],
  edits: [
    {
      from: '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)',
      to: `  function nextWrite(fn) {\n    if (socket === null) { ${MARKER}\n      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)`,
    },
    {
      from: '    incomings = null\n    clearImmediate(nextWriteTimer)\n    socket.removeListener(\'data\', data)',
      to: `    incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null ${MARKER}\n    socket.removeListener('data', data)`,
    },
  ],
};

const BEGIN_MARKER = '/* pin-patch: pipelined BEGIN */';
const POSTGRES_BEGIN = {
  files: ['node_modules/postgres/src/index.js', 'node_modules/postgres/cjs/src/index.js', 'node_modules/postgres/cf/src/index.js'],
  marker: BEGIN_MARKER,
  edits: [
    {
      from: "      await sql.unsafe('begin ' + options.replace(/[^a-z ]/ig, ''), [], { onexecute }).execute()\n      return await Promise.race([\n        scope(connection, fn),",
      to: `      let assigned ${BEGIN_MARKER}
      const begun = sql.unsafe('begin ' + options.replace(/[^a-z ]/ig, ''), [], { onexecute: c => (onexecute(c), assigned()) }).execute()
      begun.catch(() => { /* awaited in scope() */ })
      // go on as soon as a connection has taken the BEGIN (at once when the pool has one ready): the first
      // statements follow it in the same write. The pool's go()/onopen() file the connection under \`full\`
      // after BEGIN (onexecute answers undefined); it is the transaction's: back to \`reserved\`.
      await Promise.race([new Promise(r => assigned = r), begun])
      connection.queue === full && move(connection, reserved)
      return await Promise.race([
        scope(connection, fn, undefined, begun),`,
    },
    {
      from: '    async function scope(c, fn, name) {',
      to: `    async function scope(c, fn, name, begun) { ${BEGIN_MARKER}`,
    },
    {
      from: '          Promise.resolve(Array.isArray(x) ? Promise.all(x) : x).then(resolve, reject)\n        })\n\n        if (uncaughtError)',
      to: `          Promise.resolve(Array.isArray(x) ? Promise.all(x) : x).then(resolve, reject)\n        })\n        begun && await begun ${BEGIN_MARKER}\n\n        if (uncaughtError)`,
    },
  ],
};

/** Applies the patches; returns the files it changed. Throws when a file does not match. */
export function patchDependencies() {
  const changed = [];
  const pkgFile = path.join(root, 'node_modules/postgres/package.json');
  if (!existsSync(pkgFile)) return changed; // not installed (yet)
  const version = JSON.parse(readFileSync(pkgFile, 'utf8')).version;
  if (version !== POSTGRES.version) {
    throw new Error(`postgres ${version} installed, the patch is for ${POSTGRES.version}: check porsager/postgres#1208 and update scripts/patch-dependencies.mjs`);
  }
  for (const rel of POSTGRES.files) {
    const file = path.join(root, rel);
    if (!existsSync(file)) continue;
    let text = readFileSync(file, 'utf8');
    if (text.includes(MARKER)) continue;
    for (const { from, to } of POSTGRES.edits) {
      if (!text.includes(from)) throw new Error(`${rel}: the code to patch was not found (postgres ${version})`);
      text = text.replace(from, to);
    }
    writeFileSync(file, text);
    changed.push(rel);
  }
  for (const rel of POSTGRES_BEGIN.files) {
    const file = path.join(root, rel);
    if (!existsSync(file)) continue;
    let text = readFileSync(file, 'utf8');
    if (text.includes(POSTGRES_BEGIN.marker)) continue;
    for (const { from, to } of POSTGRES_BEGIN.edits) {
      if (!text.includes(from)) throw new Error(`${rel}: the code to patch (pipelined BEGIN) was not found (postgres ${version})`);
      text = text.replace(from, to);
    }
    writeFileSync(file, text);
    changed.push(rel);
  }
  return changed;
}

/** `patchDependencies` for a command line: says what it changed, or why it failed and exits 1. */
export function applyPatchesOrExit(tag) {
  try {
    const changed = patchDependencies();
    if (changed.length) console.log(`[${tag}] patched ${changed.join(', ')}`);
  } catch (e) {
    console.error(`[${tag}] ${e.message}`);
    process.exit(1);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) applyPatchesOrExit('patch');
