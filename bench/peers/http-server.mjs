// Benchmark server: `node http-server.mjs <bare|mock|mockttp> <scenario> <count>`; prints its
// URL, then serves until stdin ends. Every kind answers the same bytes (mockttp, the peer a
// user would otherwise pick, only json and sse: its rules answer with the whole SSE body at once):
//   json:  GET /json → a 1 KiB JSON body, <count> times
//   sse:   POST /v1/chat/completions → a 20-event chat stream (no gaps), <count> times
//   gap:   POST /v1/chat/completions → the same 20 events, 50 ms between them
//   concurrent: GET /n → 600 queued answers, each naming its number; the rest unmatched
//          (the bare server answers 600 numbered bodies, then the same 500 the mock sends)
// On stdin's end the mock prints {"claimed","served"} from its log.
import { createServer } from 'node:http';
import { createMockServer, reply, sse } from 'shimkit';

const [kind, scenario, countText] = process.argv.slice(2);
const count = Number(countText);
const QUEUED = 600;

export const JSON_BODY = { id: 'x', data: 'y'.repeat(1024 - 20) };
const chatWords = (n) => Array.from({ length: n }, (_, i) => `w${i} `);

/** The SSE response each scenario scripts (the bare server writes its events the same way). */
function streamFor(name) {
  if (name === 'sse') return sse.chat(chatWords(17)); // role + 17 deltas + finish + [DONE] = 20 events
  return sse.chat(chatWords(17), { eventDelayMs: 50 });
}

function encode(event) {
  let text = '';
  if (event.event !== undefined) text += `event: ${event.event}\n`;
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  for (const line of data.split('\n')) text += `data: ${line}\n`;
  return Buffer.from(`${text}\n`);
}

async function bare() {
  const body = Buffer.from(JSON.stringify(JSON_BODY));
  const stream = scenario === 'json' || scenario === 'concurrent' ? undefined : streamFor(scenario);
  const pieces = stream?.sse.map(encode) ?? [];
  const gap = stream?.eventDelayMs ?? 0;
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      if (scenario === 'json') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
        res.end(body);
      } else if (scenario === 'concurrent') {
        n += 1;
        const text = n <= QUEUED ? JSON.stringify({ n }) : JSON.stringify({ unmatched: true });
        res.writeHead(n <= QUEUED ? 200 : 500, { 'content-type': 'application/json' });
        res.end(text);
      } else {
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
        });
        res.flushHeaders();
        for (let i = 0; i < pieces.length; i++) {
          if (i > 0 && gap > 0) await new Promise((r) => setTimeout(r, gap));
          if (!res.write(pieces[i])) await new Promise((r) => res.once('drain', r));
        }
        res.end();
      }
    });
  });
  await new Promise((r) => server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 }, r));
  console.log(`http://127.0.0.1:${server.address().port}`);
  return async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
}

async function mock() {
  const api = await createMockServer();
  if (scenario === 'json') api.expect({ path: '/json' }, reply.json(JSON_BODY, { times: count }));
  else if (scenario === 'concurrent') {
    api.enqueue(Array.from({ length: QUEUED }, (_, i) => reply.json({ n: i + 1 })));
  } else api.expect({ path: '/v1/chat/completions' }, { ...streamFor(scenario), times: count });
  console.log(api.url);
  return async () => {
    const log = api.requests();
    const claimed = log.filter((r) => r.claimedBy !== null).length;
    const complete = log.filter((r) => r.response.endedBy === 'complete').length;
    await api.dispose();
    console.log(JSON.stringify({ claimed, complete, logged: log.length }));
  };
}

async function mockttp() {
  const { getLocal } = await import('mockttp');
  const server = getLocal();
  await server.start();
  if (scenario === 'json') {
    const body = JSON.stringify(JSON_BODY);
    await server
      .forGet('/json')
      .always()
      .thenReply(200, body, { 'content-type': 'application/json' });
  } else if (scenario === 'sse') {
    const body = Buffer.concat(streamFor(scenario).sse.map(encode));
    await server.forPost('/v1/chat/completions').always().thenReply(200, body, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    });
  } else throw new Error(`bench: mockttp has no ${scenario} scenario`);
  console.log(server.url.replace('localhost', '127.0.0.1'));
  return () => server.stop();
}

const kinds = { bare, mock, mockttp };
const stop = await kinds[kind]();
process.stdin.on('end', async () => {
  await stop();
  process.exit(0);
});
process.stdin.resume();
