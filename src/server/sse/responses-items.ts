// The output items of a Responses API stream (used by responses.ts): each
// one's added / delta / done events, in the shapes of openai 6.49.0's
// ResponseStreamEvent types and the order its ResponseAccumulator needs
// (an item and its part are added before their deltas).

/** One output item to stream. */
export type OutputItem =
  | { kind: 'message'; id: string; pieces: string[] }
  | { kind: 'reasoning'; id: string; form: 'summary' | 'text'; pieces: string[] }
  | { kind: 'function_call'; id: string; callId: string; name: string; pieces: string[] };

/** A reasoning item streamed as summary deltas or as reasoning-text deltas. */
export function reasoningItem(id: string, form: 'summary' | 'text', pieces: string[]): OutputItem {
  return { kind: 'reasoning', id, form, pieces };
}

type Emit = (type: string, body: object) => void;

/**
 * Emit every item's events, `output_index` 0, 1, … in order; returns the
 * items as done (for `output` of `response.completed` / `.failed`). With
 * `broken`, the last item stops after its deltas (the stream fails there)
 * and is not among those returned.
 */
export function streamItems(items: readonly OutputItem[], emit: Emit, broken: boolean): object[] {
  const done: object[] = [];
  for (const [index, item] of items.entries()) {
    const last = broken && index === items.length - 1;
    const finished = streamItem(item, index, emit, last);
    if (finished) done.push(finished);
  }
  return done;
}

function streamItem(
  item: OutputItem,
  output_index: number,
  emit: Emit,
  cut: boolean,
): object | undefined {
  const item_id = item.id;
  const text = item.pieces.join('');
  switch (item.kind) {
    case 'message': {
      const at = { item_id, output_index, content_index: 0 };
      emit('response.output_item.added', {
        output_index,
        item: {
          id: item_id,
          type: 'message',
          status: 'in_progress',
          content: [],
          role: 'assistant',
        },
      });
      emit('response.content_part.added', { ...at, part: outputText('') });
      for (const delta of item.pieces)
        emit('response.output_text.delta', { ...at, delta, logprobs: [] });
      if (cut) return undefined;
      emit('response.output_text.done', { ...at, text, logprobs: [] });
      emit('response.content_part.done', { ...at, part: outputText(text) });
      const done = finishedItem(item);
      emit('response.output_item.done', { output_index, item: done });
      return done;
    }
    case 'reasoning': {
      const summary = item.form === 'summary';
      const part = (t: string) => reasoningPart(summary, t);
      const at = summary
        ? { item_id, output_index, summary_index: 0 }
        : { item_id, output_index, content_index: 0 };
      const kind = summary ? 'reasoning_summary' : 'reasoning';
      emit('response.output_item.added', {
        output_index,
        item: summary
          ? { id: item_id, type: 'reasoning', summary: [] }
          : { id: item_id, type: 'reasoning', summary: [], content: [] },
      });
      emit(summary ? 'response.reasoning_summary_part.added' : 'response.content_part.added', {
        ...at,
        part: part(''),
      });
      for (const delta of item.pieces) emit(`response.${kind}_text.delta`, { ...at, delta });
      if (cut) return undefined;
      emit(`response.${kind}_text.done`, { ...at, text });
      emit(summary ? 'response.reasoning_summary_part.done' : 'response.content_part.done', {
        ...at,
        part: part(text),
      });
      const done = finishedItem(item);
      emit('response.output_item.done', { output_index, item: done });
      return done;
    }
    case 'function_call': {
      emit('response.output_item.added', {
        output_index,
        item: functionCallItem(item, 'in_progress', ''),
      });
      for (const delta of item.pieces)
        emit('response.function_call_arguments.delta', { item_id, output_index, delta });
      if (cut) return undefined;
      emit('response.function_call_arguments.done', {
        item_id,
        output_index,
        name: item.name,
        arguments: text,
      });
      const done = finishedItem(item);
      emit('response.output_item.done', { output_index, item: done });
      return done;
    }
  }
}

/**
 * An item as done: as `response.output_item.done` and `response.completed`
 * list it, and as the `output` of a response sent as one JSON body.
 */
export function finishedItem(item: OutputItem): object {
  const text = item.pieces.join('');
  switch (item.kind) {
    case 'message':
      return {
        id: item.id,
        type: 'message',
        status: 'completed',
        content: [outputText(text)],
        role: 'assistant',
      };
    case 'reasoning':
      return item.form === 'summary'
        ? { id: item.id, type: 'reasoning', summary: [reasoningPart(true, text)] }
        : { id: item.id, type: 'reasoning', summary: [], content: [reasoningPart(false, text)] };
    case 'function_call':
      return functionCallItem(item, 'completed', text);
  }
}

function outputText(text: string): object {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

function reasoningPart(summary: boolean, text: string): object {
  return { type: summary ? 'summary_text' : 'reasoning_text', text };
}

function functionCallItem(
  item: Extract<OutputItem, { kind: 'function_call' }>,
  status: string,
  args: string,
): object {
  return {
    id: item.id,
    type: 'function_call',
    status,
    arguments: args,
    call_id: item.callId,
    name: item.name,
  };
}
