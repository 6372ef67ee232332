import { type Entry, isEntry, READERS, shown } from './formats.js';

// What a playbook reads in a model request (SPEC PB-01, PB-02): which of the
// three wire formats it is, the last user message's text, and every tool
// result it carries. Pure functions of the parsed JSON body: any value is
// read without throwing, in one pass over the messages.

/** The wire format of a model endpoint. */
export type ModelFormat = 'chat' | 'responses' | 'messages';

const PATHS: Readonly<Record<string, ModelFormat>> = {
  '/v1/chat/completions': 'chat',
  '/chat/completions': 'chat',
  '/v1/responses': 'responses',
  '/responses': 'responses',
  '/v1/messages': 'messages',
  '/messages': 'messages',
};

/**
 * The format of a model request: `POST /v1/chat/completions` (or without
 * `/v1`) is `'chat'`, `/v1/responses` `'responses'`, `/v1/messages`
 * `'messages'`; any other method or path (exact, without the query) is not a
 * model request.
 */
export function modelFormatOf(method: string, path: string): ModelFormat | undefined {
  if (typeof method !== 'string' || method.toUpperCase() !== 'POST') return undefined;
  return Object.hasOwn(PATHS, path) ? PATHS[path] : undefined;
}

/** One tool result a request carries. */
export interface ToolResultIn {
  toolCallId: string;
  /** Exactly as sent (a string stays a string; an array stays the array). */
  content: unknown;
  /** The text parts joined with nothing between them (a string content is itself). */
  text: string;
  /** Anthropic `is_error: true`; always false for the OpenAI formats. */
  isError: boolean;
}

/** What a model request says, in any of the three formats. */
export interface Conversation {
  format: ModelFormat;
  /** `body.stream === true`. */
  stream: boolean;
  /** `body.model` when a string. */
  model: string | undefined;
  /** chat: `body.stream_options.include_usage === true`; else false. */
  includeUsage: boolean;
  /** The text of the last user message (text parts joined with nothing); undefined when there is none. */
  prompt: string | undefined;
  /** Every tool result in the request, in order of appearance. */
  results: ToolResultIn[];
  /**
   * The request's last message in words, for diagnostics, its text cut at
   * about 100 characters: `user: "List files"`, `tool result for call_x:
   * "file1.txt…"`, `assistant: tool call bash`.
   */
  last: string;
}

/**
 * Read a model request's parsed JSON body as `format`. Never throws: a body
 * that is not such a request gives `{ problem }` in words (`the body has no
 * \`messages\` array, which a chat completions request has`).
 */
export function readConversation(
  format: ModelFormat,
  body: unknown,
): Conversation | { problem: string } {
  try {
    return read(format, body);
  } catch (error) {
    // Only a value no JSON body can be (a throwing getter, a revoked proxy) gets here.
    return { problem: `the body could not be read: ${safeString(error)}` };
  }
}

function read(format: ModelFormat, body: unknown): Conversation | { problem: string } {
  const reader = Object.hasOwn(READERS, format) ? READERS[format] : undefined;
  if (reader === undefined) return { problem: `unknown model format ${shown(format)}` };
  if (!isEntry(body)) {
    return { problem: `the body is ${shown(body)}, not the JSON object ${reader.name} is` };
  }
  const entries = reader.entries(body);
  if (typeof entries === 'string') return { problem: entries };
  const results: ToolResultIn[] = [];
  let lastUser: Entry | undefined;
  for (const entry of entries) {
    if (!isEntry(entry)) continue;
    if (reader.isUser(entry)) lastUser = entry;
    reader.results(entry, results);
  }
  const lastEntry = entries.length > 0 ? entries[entries.length - 1] : undefined;
  return {
    format,
    stream: body.stream === true,
    model: typeof body.model === 'string' ? body.model : undefined,
    includeUsage:
      format === 'chat' &&
      isEntry(body.stream_options) &&
      body.stream_options.include_usage === true,
    prompt: lastUser === undefined ? undefined : reader.userText(lastUser),
    results,
    last:
      entries.length === 0
        ? `no ${reader.entryName}s`
        : isEntry(lastEntry)
          ? reader.describe(lastEntry)
          : `not a ${reader.entryName}: ${shown(lastEntry)}`,
  };
}

function safeString(value: unknown): string {
  try {
    return value instanceof Error ? value.message : String(value);
  } catch {
    return 'an unprintable error';
  }
}
