// Byte-exact snapshots of the SSE builders (HT-08) against the examples of
// docs/design/sse-wire-formats.md: each expected string below is that doc's
// block, copied verbatim (String.raw keeps its backslashes as written).
import { describe, expect, it } from 'vitest';
import { type MockServerResponse, reply, sse } from '../../src/index.js';
import { toWireResponse } from '../../src/server/response.js';

/** §1a */
const CHAT_TEXT = `data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"content":"lo"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}

data: [DONE]

`;

/** §1b */
const CHAT_TOOL = String.raw`data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_shimkit_1","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}

data: [DONE]

`;

/** §1c */
const CHAT_REASONING = `data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"reasoning_content":"Think."},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}

`;

/** §1d */
const CHAT_ERROR = `data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-shimkit-1","object":"chat.completion.chunk","created":1700000000,"model":"shimkit-model","system_fingerprint":"fp_shimkit","choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}]}

data: {"error":{"message":"shimkit: scripted stream error","type":"server_error","param":null,"code":null}}

`;

/** §2a */
const RESPONSES_TEXT = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_shimkit_1","object":"response","created_at":1700000000,"status":"in_progress","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"shimkit-model","output":[],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":false,"temperature":1,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","usage":null,"user":null,"metadata":{}}}

event: response.in_progress
data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_shimkit_1","object":"response","created_at":1700000000,"status":"in_progress","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"shimkit-model","output":[],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":false,"temperature":1,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","usage":null,"user":null,"metadata":{}}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"msg_shimkit_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}

event: response.content_part.added
data: {"type":"response.content_part.added","sequence_number":3,"item_id":"msg_shimkit_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_shimkit_1","output_index":0,"content_index":0,"delta":"Hel","logprobs":[]}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_shimkit_1","output_index":0,"content_index":0,"delta":"lo","logprobs":[]}

event: response.output_text.done
data: {"type":"response.output_text.done","sequence_number":6,"item_id":"msg_shimkit_1","output_index":0,"content_index":0,"text":"Hello","logprobs":[]}

event: response.content_part.done
data: {"type":"response.content_part.done","sequence_number":7,"item_id":"msg_shimkit_1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"Hello"}}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":8,"output_index":0,"item":{"id":"msg_shimkit_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hello"}],"role":"assistant"}}

event: response.completed
data: {"type":"response.completed","sequence_number":9,"response":{"id":"resp_shimkit_1","object":"response","created_at":1700000000,"status":"completed","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"shimkit-model","output":[{"id":"msg_shimkit_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hello"}],"role":"assistant"}],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":false,"temperature":1,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":11},"user":null,"metadata":{}}}

`;

/** §2b */
const RESPONSES_REASONING_CALL = String.raw`event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_shimkit_1","type":"reasoning","summary":[]}}

event: response.reasoning_summary_part.added
data: {"type":"response.reasoning_summary_part.added","sequence_number":3,"item_id":"rs_shimkit_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_shimkit_1","output_index":0,"summary_index":0,"delta":"Check the weather."}

event: response.reasoning_summary_text.done
data: {"type":"response.reasoning_summary_text.done","sequence_number":5,"item_id":"rs_shimkit_1","output_index":0,"summary_index":0,"text":"Check the weather."}

event: response.reasoning_summary_part.done
data: {"type":"response.reasoning_summary_part.done","sequence_number":6,"item_id":"rs_shimkit_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"Check the weather."}}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":7,"output_index":0,"item":{"id":"rs_shimkit_1","type":"reasoning","summary":[{"type":"summary_text","text":"Check the weather."}]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":8,"output_index":1,"item":{"id":"fc_shimkit_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_shimkit_1","name":"get_weather"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":9,"item_id":"fc_shimkit_1","output_index":1,"delta":"{\"city\":"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":10,"item_id":"fc_shimkit_1","output_index":1,"delta":"\"Paris\"}"}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":11,"item_id":"fc_shimkit_1","output_index":1,"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":12,"output_index":1,"item":{"id":"fc_shimkit_1","type":"function_call","status":"completed","arguments":"{\"city\":\"Paris\"}","call_id":"call_shimkit_1","name":"get_weather"}}

`;

/** §2c */
const RESPONSES_ERRORS = `event: error
data: {"type":"error","code":"server_error","message":"shimkit: scripted stream error","param":null,"sequence_number":4}

event: response.failed
data: {"type":"response.failed","sequence_number":4,"response":{"id":"resp_shimkit_1","object":"response","created_at":1700000000,"status":"failed","background":false,"error":{"code":"server_error","message":"shimkit: scripted failure"},"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"shimkit-model","output":[],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":false,"temperature":1,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","usage":null,"user":null,"metadata":{}}}

`;

/** §3a */
const MESSAGES_FIXTURE = `event: message_start
data: {"type":"message_start","message":{"id":"msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK","type":"message","role":"assistant","content":[],"model":"claude-3-opus-20240229","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":11,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"!"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":6}}

event: message_stop
data: {"type":"message_stop"}

`;

/** §3b */
const MESSAGES_THINKING_TOOL = String.raw`event: message_start
data: {"type":"message_start","message":{"id":"msg_shimkit_1","type":"message","role":"assistant","model":"shimkit-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Check the weather."}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2hpbWtpdA=="}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Checking."}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_shimkit_1","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}

event: message_stop
data: {"type":"message_stop"}

`;

/** §3c */
const MESSAGES_ERROR = `event: error
data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

`;

/** The response's body as sent: its pre-encoded pieces, joined. */
function body(response: MockServerResponse): string {
  return pieces(response).join('');
}

function pieces(response: MockServerResponse): string[] {
  return toWireResponse(response, 'the test response').pieces.map((p) =>
    Buffer.from(p).toString('utf8'),
  );
}

/** The doc's block split into its events (each ending in its blank line). */
function events(block: string): string[] {
  return block.split(/(?<=\n\n)/).filter((e) => e !== '');
}

describe('sse builders, byte for byte (sse-wire-formats.md)', () => {
  it('HT-08 §1a chat text with usage: 6 events, usage:null in every chunk, the usage chunk, [DONE]', () => {
    expect(body(sse.chat(['Hel', 'lo'], { includeUsage: true, usage: { prompt_tokens: 9 } }))).toBe(
      CHAT_TEXT,
    );
  });

  it('HT-08 §1a chat text without includeUsage: no usage members, no usage chunk (5 events)', () => {
    const expected = events(CHAT_TEXT)
      .filter((e) => !e.includes('"choices":[]'))
      .map((e) => e.replace(',"usage":null', ''));
    expect(pieces(sse.chat(['Hel', 'lo']))).toEqual(expected);
    expect(expected).toHaveLength(5);
  });

  it('HT-08 §1b chat tool call only: the role chunk carries the first call header', () => {
    const response = sse.chat([], {
      toolCalls: [{ name: 'get_weather', arguments: ['{"city":', '"Paris"}'] }],
    });
    expect(body(response)).toBe(CHAT_TOOL);
  });

  it('HT-08 §1c chat reasoning deltas come before the content, in reasoning_content', () => {
    const out = pieces(sse.chat('Hi', { reasoning: 'Think.' }));
    expect(out.slice(0, 3).join('')).toBe(CHAT_REASONING);
    expect(out.slice(3)).toHaveLength(2); // finish chunk, [DONE]
    const openRouter = body(sse.chat('Hi', { reasoning: 'Think.', reasoningField: 'reasoning' }));
    expect(openRouter).toContain('"delta":{"reasoning":"Think."}');
  });

  it('HT-08 §1d chat error mid-stream: the error chunk after the deltas, no [DONE]', () => {
    expect(body(sse.chat('Hel', { error: {} }))).toBe(CHAT_ERROR);
  });

  it('HT-08 §2a responses text: 10 events, sequence_number 0…9', () => {
    expect(body(sse.responses(['Hel', 'lo']))).toBe(RESPONSES_TEXT);
  });

  it('HT-08 §2b responses reasoning summary then a function call; completed lists both', () => {
    const out = pieces(
      sse.responses([], {
        reasoning: 'Check the weather.',
        functionCalls: [{ name: 'get_weather', arguments: ['{"city":', '"Paris"}'] }],
      }),
    );
    expect(out).toHaveLength(14);
    expect(out.slice(2, 13).join('')).toBe(RESPONSES_REASONING_CALL);
    const completed = JSON.parse((out[13] as string).split('data: ')[1] as string);
    expect(completed.sequence_number).toBe(13);
    expect(completed.response.output.map((item: { id: string }) => item.id)).toEqual([
      'rs_shimkit_1',
      'fc_shimkit_1',
    ]);
  });

  it('HT-08 §2c responses error and response.failed end the stream after the deltas', () => {
    // The doc numbers both 4 as "the event after the delta"; that holds
    // without response.in_progress (created 0, added 1, part 2, delta 3).
    const [errorEvent, failedEvent] = events(RESPONSES_ERRORS);
    const errored = pieces(sse.responses('Hel', { error: {}, inProgress: false }));
    expect(errored).toHaveLength(5);
    expect(errored[4]).toBe(errorEvent);
    const failed = pieces(sse.responses('Hel', { failed: {}, inProgress: false }));
    expect(failed[4]).toBe(failedEvent);
    const both = pieces(sse.responses('Hel', { error: {}, failed: {}, inProgress: false }));
    expect(both[5]).toBe(
      (failedEvent as string).replace('"sequence_number":4', '"sequence_number":5'),
    );
  });

  it('HT-08 §3a messages: the SDK fixture basic_response.txt, byte for byte (legacyOrder)', () => {
    const response = sse.messages(['Hello', ' there', '!'], {
      id: 'msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK',
      model: 'claude-3-opus-20240229',
      usage: { input_tokens: 11, output_tokens: 6 },
      legacyOrder: true,
    });
    expect(body(response)).toBe(MESSAGES_FIXTURE);
  });

  it('HT-08 §3b messages thinking, text, tool use: block indexes count every block', () => {
    const response = sse.messages('Checking.', {
      thinking: { text: 'Check the weather.', signature: 'c2hpbWtpdA==' },
      toolUse: [{ name: 'get_weather', input: ['{"city":', '"Paris"}'] }],
      usage: { output_tokens: 12 },
    });
    expect(body(response)).toBe(MESSAGES_THINKING_TOOL);
  });

  it('HT-08 §3c messages error mid-stream: event: error instead of the rest', () => {
    const out = pieces(
      sse.messages('Hel', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
    );
    expect(out.at(-1)).toBe(MESSAGES_ERROR);
    expect(out.map((e) => e.split('\n')[0])).toEqual([
      'event: message_start',
      'event: content_block_start',
      'event: ping',
      'event: content_block_delta',
      'event: error',
    ]);
  });

  it('HT-08 §6 reply.status writes retry-after and retry-after-ms and an error body both SDKs read', () => {
    const wire = toWireResponse(reply.status(429, { retryAfterMs: 1 }), 'the test response');
    expect(wire.status).toBe(429);
    expect(wire.headers).toEqual([
      ['content-type', 'application/json'],
      ['retry-after', '1'],
      ['retry-after-ms', '1'],
    ]);
    expect(Buffer.from(wire.pieces[0] as Uint8Array).toString()).toBe(
      '{"type":"error","error":{"type":"rate_limit_error","message":"shimkit: scripted 429 Too Many Requests","code":null,"param":null}}',
    );
    const seconds = toWireResponse(reply.status(503, { retryAfter: 2 }), 'the test response');
    expect(seconds.headers.slice(1)).toEqual([
      ['retry-after', '2'],
      ['retry-after-ms', '2000'],
    ]);
    expect(body(reply.status(529))).toContain('"type":"overloaded_error"');
  });
});
