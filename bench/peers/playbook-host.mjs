// Benchmark host for `server.playbook`: `node playbook-host.mjs <playbook|enqueue> <conversations>`.
// Scripts <conversations> tool-calling conversations of 10 model answers each
// (9 bash calls, then text), either as one playbook of that many turns or as
// the same answers enqueued with sse.chat (arguments in the same 3 pieces,
// the same ids), prints its URL, serves until stdin ends, then prints
// {"requests","errors"} from its log.
import { calls, createMockServer, says, sse, when } from 'shimkit';

const [mode, countText] = process.argv.slice(2);
const conversations = Number(countText);
const STEPS = 9;

/** A JSON text in 3 pieces, as the playbook streams arguments. */
function thirds(text) {
  const a = Math.ceil(text.length / 3);
  return [text.slice(0, a), text.slice(a, 2 * a), text.slice(2 * a)];
}

const api = await createMockServer();
if (mode === 'playbook') {
  const turns = Array.from({ length: conversations }, (_, c) =>
    when(`task ${c}`, [
      ...Array.from({ length: STEPS }, (_, k) => calls('bash', { command: `echo step ${k}` })),
      says('done'),
    ]),
  );
  api.playbook(turns);
} else {
  let step = 0;
  for (let c = 0; c < conversations; c++) {
    for (let k = 0; k < STEPS; k++) {
      step += 1;
      const args = JSON.stringify({ command: `echo step ${k}` });
      api.enqueue(
        sse.chat([], {
          id: `chatcmpl-shimkit-p1_s${step}`,
          toolCalls: [{ name: 'bash', id: `call_shimkit_p1_s${step}_1`, arguments: thirds(args) }],
        }),
      );
    }
    step += 1;
    api.enqueue(sse.chat(['done'], { id: `chatcmpl-shimkit-p1_s${step}` }));
  }
}
process.stdout.write(`${api.url}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  const log = api.requests();
  const errors = log.filter((r) => r.response.status !== 200).length;
  process.stdout.write(`${JSON.stringify({ requests: log.length, errors })}\n`);
  await api.dispose();
});
