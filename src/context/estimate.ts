import type { Message } from '../model/message';

/**
 * Characters per token of the estimate (docs/context.md, "Estimate"): measured against the
 * vendors' reported usage; an estimate errs on the side of more tokens, so it is rounded
 * down from the measured ratio. JSON punctuation and ids tokenize densely, prose sparsely.
 */
export const CHARS_PER_TOKEN = 3.2;
/** Per-message framing the APIs add (role markers, block separators), in tokens. */
export const TOKENS_PER_MESSAGE = 4;

const sizes = new WeakMap<Message, number>();

/** Characters a message adds to a request (text, tool names and inputs, results); cached per message object. */
export function charsOf(message: Message): number {
  let size = sizes.get(message);
  if (size !== undefined) return size;
  size = 0;
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        size += block.text.length;
        break;
      case 'tool_use':
        size += block.name.length + block.id.length + JSON.stringify(block.input ?? {}).length;
        break;
      case 'tool_result':
        size += block.content.length + block.toolUseId.length;
        break;
    }
  }
  sizes.set(message, size);
  return size;
}

/** Estimated tokens of `messages[from..to)`. */
export function tokensOfRange(messages: readonly Message[], from: number, to: number): number {
  let chars = 0;
  for (let i = from; i < to; i++) chars += charsOf(messages[i]!);
  return Math.ceil(chars / CHARS_PER_TOKEN) + (to - from) * TOKENS_PER_MESSAGE;
}

export function tokensOfText(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/**
 * The running size of one session's request (docs/context.md, "Estimate"): an anchor (the
 * prompt tokens the provider reported for the last call, or a full estimate after a
 * compaction or a restart) plus the estimated tokens of the messages appended since.
 * `estimate` walks only the messages it has not seen yet: O(appended) per call, never the
 * whole history.
 */
export class ContextMeter {
  private anchor = 0;
  /** Messages (full-history index) up to which `extra` is counted. */
  private counted = 0;
  private extra = 0;
  private anchored = false;

  /** Whether the meter has an anchor (false: call `rebase` with a full estimate first). */
  get ready(): boolean {
    return this.anchored;
  }

  /** Anchor on a full estimate of the request for `messages[0..count)` as it is sent now. */
  rebase(tokens: number, count: number): void {
    this.anchor = tokens;
    this.counted = count;
    this.extra = 0;
    this.anchored = true;
  }

  /** The provider reported `promptTokens` for a request holding the first `sentCount` messages. */
  report(promptTokens: number, sentCount: number): void {
    this.rebase(promptTokens, sentCount);
  }

  /** Forget the anchor (the request's shape changed: a compaction). */
  invalidate(): void {
    this.anchored = false;
  }

  /** Estimated tokens of the next request over `messages` (the full history). */
  estimate(messages: readonly Message[]): number {
    if (messages.length < this.counted) {
      this.counted = messages.length;
      this.extra = 0;
    }
    for (let i = this.counted; i < messages.length; i++) this.extra += charsOf(messages[i]!) / CHARS_PER_TOKEN + TOKENS_PER_MESSAGE;
    this.counted = messages.length;
    return Math.ceil(this.anchor + this.extra);
  }
}

/** Tokens every request costs beyond its text (the APIs' framing of system prompt and turns). */
export const REQUEST_OVERHEAD = 8;
/**
 * Tokens a request with tools costs beyond their definitions: the tool-use system prompt the
 * vendor adds (Anthropic documents 346 for its current models with `tool_choice: auto`).
 */
export const TOOLS_OVERHEAD = 350;

const toolTokens = new WeakMap<readonly unknown[], number>();

/**
 * Estimated tokens of a request's fixed part: system prompt, tool definitions and framing.
 * The definitions are measured once per array (the runtime caches an agent's definitions).
 */
export function fixedTokensOf(system: string, tools: readonly unknown[]): number {
  let definitions = toolTokens.get(tools);
  if (definitions === undefined) {
    definitions = tools.length > 0 ? TOOLS_OVERHEAD + tokensOfText(JSON.stringify(tools)) : 0;
    toolTokens.set(tools, definitions);
  }
  return REQUEST_OVERHEAD + tokensOfText(system) + definitions;
}
