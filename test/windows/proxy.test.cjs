'use strict';
// The frame proxy on Windows, for real: named pipes and TCP (Wine 10).
const test = require('node:test');
const assert = require('node:assert/strict');
const { connect, createServer } = require('node:net');
const { shimkit } = require('./helpers.cjs');

const { createFrameProxy, createFrameReader, encodeFrame } = shimkit;

let n = 0;
/** A pipe name of this test's own. */
const pipeName = () => `\\\\.\\pipe\\shimkit-test-${process.pid}-${++n}`;

/** An echo server on `address` (a pipe name, or port 0), closed when the test ends. */
async function echoServer(t, address) {
  const server = createServer((socket) => {
    socket.on('error', () => {}); // a severed connection may be reset mid-echo
    socket.pipe(socket);
  });
  await new Promise((resolve) =>
    typeof address === 'string'
      ? server.listen(address, resolve)
      : server.listen(0, '127.0.0.1', resolve),
  );
  t.after(() => server.close());
  return typeof address === 'string' ? address : { host: '127.0.0.1', port: server.address().port };
}

/** Through the proxy: 3 frames out, the second dropped; returns what came back. */
async function dropSecond(t, listen, upstream) {
  const proxy = await createFrameProxy({
    listen,
    upstream,
    faults: [{ action: 'drop', direction: 'c2s', frame: 2 }],
  });
  t.after(() => proxy.close());
  const client = connect(proxy.address);
  t.after(() => client.destroy());
  const replies = createFrameReader(client);
  client.write(
    Buffer.concat([encodeFrame('ping 1'), encodeFrame('ping 2'), encodeFrame('ping 3')]),
  );
  await replies.waitForFrames(2, { timeoutMs: 20_000 });
  assert.deepEqual(replies.texts(), ['ping 1', 'ping 3']);
  assert.deepEqual(proxy.stats().faults, { drop: 1 });
  return proxy;
}

test('PX-10 the proxy listens on a named pipe and forwards to a named pipe, faults applied', async (t) => {
  const upstream = await echoServer(t, pipeName());
  const listen = pipeName();
  const proxy = await dropSecond(t, listen, upstream);
  assert.equal(proxy.address, listen);
});

test('PX-10 a named pipe listen in front of a TCP server, and TCP in front of a named pipe', async (t) => {
  await dropSecond(t, pipeName(), await echoServer(t, 0));
  await dropSecond(t, { host: '127.0.0.1', port: 0 }, await echoServer(t, pipeName()));
});

test('PX-10 sever() closes both sides of a named-pipe connection; new connections work', async (t) => {
  const upstream = await echoServer(t, pipeName());
  const proxy = await createFrameProxy({ listen: pipeName(), upstream });
  t.after(() => proxy.close());
  const client = connect(proxy.address);
  const replies = createFrameReader(client);
  client.write(encodeFrame('one'));
  await replies.waitForFrames(1, { timeoutMs: 20_000 });
  const closed = new Promise((resolve) => client.once('close', resolve));
  proxy.sever();
  await closed;
  const again = connect(proxy.address);
  t.after(() => again.destroy());
  const more = createFrameReader(again);
  again.write(encodeFrame('two'));
  await more.waitForFrames(1, { timeoutMs: 20_000 });
  assert.deepEqual(more.texts(), ['two']);
});

test('PX-10 a file path is refused on Windows with a clear error, before anything listens', async () => {
  await assert.rejects(
    createFrameProxy({ listen: 'C:\\temp\\proxy.sock', upstream: pipeName() }),
    /is a file path; on Windows Node listens and connects on named pipes/,
  );
});

test('PX-10 a pipe name already taken is reported in words', async (t) => {
  const taken = await echoServer(t, pipeName());
  await assert.rejects(
    createFrameProxy({ listen: taken, upstream: pipeName() }),
    /another server has this pipe name/,
  );
});
