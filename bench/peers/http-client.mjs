// Benchmark client: `node http-client.mjs <url> <scenario> <count>`; prints one JSON line.
//   json / sse: <count> sequential requests on one keep-alive socket; per-request ms
//     (to the end of the body) → {"ms": [...]}
//   gap: one stream; the gaps between chunk arrivals → {"gaps": [...]}
//   concurrent: <count> requests at once, each on its own connection →
//     {"ms", "status": {code: n}, "bodies": [n...], "errors"}
import { Agent, request } from 'node:http';

const [url, scenario, countText] = process.argv.slice(2);
const count = Number(countText);

function call(agent, method, path, onChunk) {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, agent }, (res) => {
      const parts = [];
      res.on('data', (chunk) => {
        onChunk?.(chunk);
        parts.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (method === 'POST') {
      req.setHeader('content-type', 'application/json');
      req.end(
        JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      );
    } else req.end();
  });
}

if (scenario === 'json' || scenario === 'sse') {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const ms = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const { status } = await (scenario === 'json'
      ? call(agent, 'GET', '/json')
      : call(agent, 'POST', '/v1/chat/completions'));
    ms.push(performance.now() - start);
    if (status !== 200) throw new Error(`bench client: status ${status}`);
  }
  agent.destroy();
  console.log(JSON.stringify({ ms }));
} else if (scenario === 'gap') {
  const agent = new Agent({ keepAlive: false });
  const times = [];
  await call(agent, 'POST', '/v1/chat/completions', () => times.push(performance.now()));
  console.log(JSON.stringify({ gaps: times.slice(1).map((t, i) => t - times[i]) }));
} else {
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const status = {};
  const bodies = [];
  let errors = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: count }, () =>
      call(agent, 'GET', '/n').then(
        (r) => {
          status[r.status] = (status[r.status] ?? 0) + 1;
          if (r.status === 200) bodies.push(JSON.parse(r.body).n);
        },
        () => {
          errors += 1;
        },
      ),
    ),
  );
  console.log(JSON.stringify({ ms: performance.now() - start, status, bodies, errors }));
}
