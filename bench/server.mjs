// HT (issue 22): the mock server against a bare `node:http` server answering
// the same bytes. Server and client each run in their own process (the mock's
// serving worker thread inside its host process, as in a test); ratios are
// taken per round, in alternating order, and the median kept.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, round } from './lib.mjs';

const peer = (name) => fileURLToPath(new URL(`./peers/${name}.mjs`, import.meta.url));

function child(name, args) {
  const proc = spawn(process.execPath, [peer(name), ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = [];
  const waiters = [];
  let rest = '';
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (text) => {
    rest += text;
    for (let at = rest.indexOf('\n'); at !== -1; at = rest.indexOf('\n')) {
      lines.push(rest.slice(0, at));
      rest = rest.slice(at + 1);
      waiters.shift()?.();
    }
  });
  const exited = new Promise((resolve) => proc.on('close', resolve));
  return {
    async line() {
      while (lines.length === 0) {
        const code = await Promise.race([exited, new Promise((r) => waiters.push(r))]);
        if (lines.length === 0 && code !== undefined)
          throw new Error(`bench: ${name} exited ${code}`);
      }
      return lines.shift();
    },
    exited,
    end() {
      proc.stdin.end();
    },
  };
}

/** One server of `kind`, one client run against it; the client's figures and the server's last line. */
async function once(kind, scenario, count) {
  const server = child('http-server', [kind, scenario, String(count)]);
  const url = await server.line();
  const client = child('http-client', [url, scenario, String(count)]);
  const figures = JSON.parse(await client.line());
  await client.exited;
  server.end();
  const last = kind === 'mock' ? JSON.parse(await server.line()) : undefined;
  await server.exited;
  return { ...figures, server: last };
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/**
 * Sequential answers: per-round p50 ratios, mock ÷ bare and mockttp ÷ bare (the
 * first tenth of each run is warm-up); the three kinds run in a rotating order.
 */
async function sequential(scenario, count, rounds) {
  const kinds = ['bare', 'mock', 'mockttp'];
  const p50 = { bare: [], mock: [], mockttp: [] };
  const ratios = { mock: [], mockttp: [] };
  for (let r = 0; r < rounds; r++) {
    const got = {};
    for (let k = 0; k < kinds.length; k++) {
      const kind = kinds[(r + k) % kinds.length];
      const { ms } = await once(kind, scenario, count);
      got[kind] = median(ms.slice(Math.floor(count / 10)));
      p50[kind].push(got[kind]);
    }
    ratios.mock.push(got.mock / got.bare);
    ratios.mockttp.push(got.mockttp / got.bare);
  }
  return {
    mockP50Ms: round(median(p50.mock), 4),
    bareP50Ms: round(median(p50.bare), 4),
    mockttpP50Ms: round(median(p50.mockttp), 4),
    ratio: round(median(ratios.mock)),
    mockttpRatio: round(median(ratios.mockttp)),
  };
}

export async function serverJson({ rounds = 5, count = 2000 } = {}) {
  const s = await sequential('json', count, rounds);
  const out = {
    mockP50Ms: s.mockP50Ms,
    bareP50Ms: s.bareP50Ms,
    p50RatioToBare: s.ratio,
    mockttpP50Ms: s.mockttpP50Ms,
    mockttpP50RatioToBare: s.mockttpRatio,
  };
  process.stderr.write(`  json: ${JSON.stringify(out)}\n`);
  return out;
}

export async function serverSse({ rounds = 5, count = 500 } = {}) {
  const s = await sequential('sse', count, rounds);
  const out = {
    mockStreamMs: s.mockP50Ms,
    bareStreamMs: s.bareP50Ms,
    ratioToBare: s.ratio,
    mockttpStreamMs: s.mockttpP50Ms,
    mockttpRatioToBare: s.mockttpRatio,
  };
  process.stderr.write(`  sse: ${JSON.stringify(out)}\n`);
  return out;
}

export async function serverConcurrent({ rounds = 3, count = 1000 } = {}) {
  const ratios = [];
  const worst = {
    claimed: Number.POSITIVE_INFINITY,
    duplicated: 0,
    errors: 0,
    unmatched: Infinity,
  };
  for (let r = 0; r < rounds; r++) {
    const got = {};
    for (const kind of r % 2 === 0 ? ['bare', 'mock'] : ['mock', 'bare'])
      got[kind] = await once(kind, 'concurrent', count);
    ratios.push(got.bare.ms / got.mock.ms); // throughput ratio: the same requests in less time is more
    const bodies = got.mock.bodies;
    const duplicated = bodies.length - new Set(bodies).size;
    worst.claimed = Math.min(worst.claimed, new Set(bodies).size, got.mock.server.claimed);
    worst.duplicated = Math.max(worst.duplicated, duplicated);
    worst.errors = Math.max(worst.errors, got.mock.errors);
    worst.unmatched = Math.min(worst.unmatched, got.mock.status[500] ?? 0);
  }
  const out = { ...worst, ratioToBare: round(median(ratios)) };
  process.stderr.write(`  concurrent1000: ${JSON.stringify(out)}\n`);
  return out;
}

export async function serverEventGap({ rounds = 3 } = {}) {
  const errors = [];
  for (let r = 0; r < rounds; r++) {
    const { gaps } = await once('mock', 'gap', 1);
    errors.push(...gaps.map((g) => g - 50));
  }
  const out = {
    p50: round(percentile(errors, 50), 2),
    p95: round(percentile(errors, 95), 2),
    samples: errors.length,
  };
  process.stderr.write(`  eventGapErrorMs: ${JSON.stringify(out)}\n`);
  return out;
}

/**
 * PB (issue 37): a 10-answer tool-calling conversation through the openai
 * SDK, played by a playbook vs the same answers enqueued; per round the
 * median conversation time of each (the first fifth is warm-up), rounds in
 * alternating order, the median of the per-round ratios kept.
 */
export async function serverPlaybook({ rounds = 11, conversations = 40 } = {}) {
  const ratios = [];
  const times = { playbook: [], enqueue: [] };
  let errors = 0;
  for (let r = 0; r < rounds; r++) {
    const got = {};
    for (const mode of r % 2 === 0 ? ['enqueue', 'playbook'] : ['playbook', 'enqueue']) {
      const host = child('playbook-host', [mode, String(conversations)]);
      const url = await host.line();
      const agent = child('playbook-agent', [url, String(conversations)]);
      const { ms } = JSON.parse(await agent.line());
      await agent.exited;
      host.end();
      errors += JSON.parse(await host.line()).errors;
      await host.exited;
      got[mode] = median(ms.slice(Math.floor(conversations / 5)));
      times[mode].push(got[mode]);
    }
    ratios.push(got.playbook / got.enqueue);
  }
  const out = {
    playbookConversationMs: round(median(times.playbook), 3),
    enqueueConversationMs: round(median(times.enqueue), 3),
    ratioToEnqueue: round(median(ratios)),
    errors,
  };
  process.stderr.write(`  playbook: ${JSON.stringify(out)}\n`);
  return out;
}
