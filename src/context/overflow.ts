/**
 * Whether a provider error says the request did not fit the model's context window
 * (docs/context.md, "Overflow recovery"): Anthropic's 400 `invalid_request_error` "prompt is
 * too long: N tokens > M maximum", OpenAI's 400 `context_length_exceeded` ("This model's
 * maximum context length is …"), and the wordings of OpenAI-compatible local servers.
 */
const OVERFLOW = /prompt is too long|context_length_exceeded|maximum context length|context window|exceeds? the context|too many tokens|input is too long/i;

export function isOverflowError(error: { readonly message: string; readonly status?: number; readonly overflow?: boolean }): boolean {
  if (error.overflow) return true;
  if (error.status !== undefined && error.status !== 400 && error.status !== 413) return false;
  return OVERFLOW.test(error.message);
}

/**
 * The request size the provider measured, when its error says it ("prompt is too long:
 * 215563 tokens > 200000 maximum", "… your messages resulted in 204308 tokens"); null otherwise.
 */
export function overflowTokensOf(message: string): number | null {
  const m = /(\d[\d,]*) tokens > \d[\d,]* maximum/i.exec(message) ?? /resulted in (\d[\d,]*) tokens/i.exec(message) ?? /requested (\d[\d,]*) tokens/i.exec(message);
  return m ? Number(m[1]!.replace(/,/g, '')) : null;
}
