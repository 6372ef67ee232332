import { describeValue, truncate } from '../../../internal/describe.js';
import type { ModelFormat, ToolResultIn } from './conversation.js';

// How each wire format's request lists its messages (conversation.ts reads
// them): OpenAI chat `messages`, the Responses API's `input` items,
// Anthropic `messages` with content blocks. Everything not text is ignored.

export type Entry = Record<string, unknown>;

/** How one format's messages (or items) read. */
export interface FormatReader {
  /** The request in a problem: `a chat completions request`. */
  name: string;
  /** What its list holds: `message` or `item`. */
  entryName: string;
  /** The messages of `body`, or the problem in words. */
  entries(body: Entry): unknown[] | string;
  /** Whether `entry` is a user message (its text is a prompt). */
  isUser(entry: Entry): boolean;
  /** The text of a user message. */
  userText(entry: Entry): string;
  /** Add the tool results `entry` carries to `out`. */
  results(entry: Entry, out: ToolResultIn[]): void;
  /** `entry` in words, for diagnostics. */
  describe(entry: Entry): string;
}

/**
 * A value in words, as describeValue (`5 (number)`, `{"a":1} (object)`), also
 * one nested too deep to print: JSON.parse builds such values, and printing
 * them overflows the stack.
 */
export function shown(value: unknown): string {
  if (typeof value !== 'object' || value === null) return describeValue(value);
  const kind = Array.isArray(value) ? 'array' : 'object';
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  return json === undefined
    ? `an ${kind} nested too deep to show`
    : `${truncate(json, 60)} (${kind})`;
}

export function isEntry(value: unknown): value is Entry {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** About how much of a text a description shows. */
const SHOWN = 100;

const isText = (type: unknown) => type === 'text';
const RESPONSES_TEXT = new Set<unknown>(['input_text', 'output_text', 'text']);
const isResponsesText = (type: unknown) => RESPONSES_TEXT.has(type);
const anyText = () => true;

/** A string itself; of an array, the `text` of the parts whose type `accept`s, joined. */
function partsText(content: unknown, accept: (type: unknown) => boolean): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (isEntry(part) && typeof part.text === 'string' && accept(part.type)) text += part.text;
  }
  return text;
}

function listOf(body: Entry, key: string, name: string): unknown[] | string {
  const list = body[key];
  if (Array.isArray(list)) return list;
  return list === undefined
    ? `the body has no \`${key}\` array, which ${name} has`
    : `the body's \`${key}\` is ${shown(list)}, not the array ${name} has`;
}

const CHAT = 'a chat completions request';
const RESPONSES = 'a Responses API request';
const MESSAGES = 'an Anthropic Messages request';

const chat: FormatReader = {
  name: CHAT,
  entryName: 'message',
  entries: (body) => listOf(body, 'messages', CHAT),
  isUser: (m) => m.role === 'user',
  userText: (m) => partsText(m.content, isText),
  results(m, out) {
    if (m.role !== 'tool' || typeof m.tool_call_id !== 'string') return;
    out.push(result(m.tool_call_id, m.content, partsText(m.content, isText), false));
  },
  describe(m) {
    if (m.role === 'tool') {
      return resultWords([result(idOf(m.tool_call_id), m.content, partsText(m.content, isText))]);
    }
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
    if (m.role === 'assistant' && calls.length > 0) {
      return `assistant: ${callWords(calls, (c) => (isEntry(c.function) ? c.function.name : undefined))}`;
    }
    return `${roleWords(m.role)}: ${quote(partsText(m.content, isText))}`;
  },
};

const responses: FormatReader = {
  name: RESPONSES,
  entryName: 'item',
  entries(body) {
    // A string is one user message.
    if (typeof body.input === 'string') return [{ role: 'user', content: body.input }];
    if (Array.isArray(body.input)) return body.input;
    return body.input === undefined
      ? `the body has no \`input\` (a string or an array of items), which ${RESPONSES} has`
      : `the body's \`input\` is ${shown(body.input)}, not the string or array of items ${RESPONSES} has`;
  },
  isUser: (item) => item.role === 'user' && (item.type === undefined || item.type === 'message'),
  userText: (item) => partsText(item.content, isResponsesText),
  results(item, out) {
    if (item.type !== 'function_call_output' || typeof item.call_id !== 'string') return;
    out.push(result(item.call_id, item.output, partsText(item.output, anyText), false));
  },
  describe(item) {
    if (item.type === 'function_call_output') {
      return resultWords([
        result(idOf(item.call_id), item.output, partsText(item.output, anyText)),
      ]);
    }
    if (item.type === 'function_call') return `assistant: ${callWords([item], (c) => c.name)}`;
    if (item.type === undefined || item.type === 'message') {
      return `${roleWords(item.role)}: ${quote(partsText(item.content, isResponsesText))}`;
    }
    return typeof item.type === 'string'
      ? `${clip(item.type, 40)} item`
      : `an item of type ${shown(item.type)}`;
  },
};

const messages: FormatReader = {
  name: MESSAGES,
  entryName: 'message',
  entries: (body) => listOf(body, 'messages', MESSAGES),
  isUser: (m) => m.role === 'user',
  // tool_result blocks are not text blocks: a message of results only is ''.
  userText: (m) => partsText(m.content, isText),
  results(m, out) {
    if (m.role !== 'user' || !Array.isArray(m.content)) return;
    for (const block of m.content) {
      if (!isEntry(block) || block.type !== 'tool_result') continue;
      if (typeof block.tool_use_id !== 'string') continue;
      const text = partsText(block.content, isText);
      out.push(result(block.tool_use_id, block.content, text, block.is_error === true));
    }
  },
  describe(m) {
    const blocks = Array.isArray(m.content) ? m.content.filter(isEntry) : [];
    const text = partsText(m.content, isText);
    if (m.role === 'user') {
      const found: ToolResultIn[] = [];
      for (const block of blocks) {
        if (block.type !== 'tool_result') continue;
        const id = idOf(block.tool_use_id);
        found.push(
          result(id, block.content, partsText(block.content, isText), block.is_error === true),
        );
      }
      if (found.length > 0) return resultWords(found) + (text ? `; user: ${quote(text)}` : '');
    }
    const uses = blocks.filter((block) => block.type === 'tool_use');
    if (m.role === 'assistant' && uses.length > 0) {
      return `assistant: ${callWords(uses, (block) => block.name)}`;
    }
    return `${roleWords(m.role)}: ${quote(text)}`;
  },
};

/** The reader of each format. */
export const READERS: Readonly<Record<ModelFormat, FormatReader>> = { chat, responses, messages };

function result(toolCallId: string, content: unknown, text: string, isError = false): ToolResultIn {
  return { toolCallId, content, text, isError };
}

function idOf(value: unknown): string {
  return typeof value === 'string' ? clip(value, 60) : `(id ${shown(value)})`;
}

function roleWords(role: unknown): string {
  return typeof role === 'string' ? clip(role, 40) : `a message with role ${shown(role)}`;
}

/** `tool result for call_x: "…"`, or several, their texts sharing the room. */
function resultWords(results: readonly ToolResultIn[]): string {
  const shown = results.slice(0, 5);
  const room = Math.max(10, Math.floor(SHOWN / shown.length));
  const one = (r: ToolResultIn) =>
    `${r.toolCallId}${r.isError ? ' (error)' : ''}: ${quote(r.text, room)}`;
  if (results.length === 1) return `tool result for ${one(shown[0] as ToolResultIn)}`;
  const more = results.length > shown.length ? `, … (${results.length} in all)` : '';
  return `tool results for ${shown.map(one).join(', ')}${more}`;
}

/** `tool call bash`, `tool calls bash, read`. */
function callWords(calls: readonly unknown[], nameOf: (call: Entry) => unknown): string {
  const names = calls.slice(0, 10).map((call) => {
    const name = isEntry(call) ? nameOf(call) : undefined;
    return typeof name === 'string' ? clip(name, 40) : '(no name)';
  });
  const more = calls.length > names.length ? `, … (${calls.length} in all)` : '';
  return `tool call${calls.length === 1 ? '' : 's'} ${names.join(', ')}${more}`;
}

/** The text in quotes, cut at `max` characters (`…`), never inside a surrogate pair. */
function quote(text: string, max = SHOWN): string {
  return JSON.stringify(clip(text, max));
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
