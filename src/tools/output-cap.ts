/**
 * Output caps. Tool results are read by a model with a finite context, and produced by
 * things (shells, files) that can be arbitrarily large: keep the head and the tail, say
 * how much was left out, and never hold more than the cap in memory while streaming.
 */

/** `text` if it fits in `limit` characters, else its head and tail around a marker. */
export function capText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const omitted = text.length - limit;
  const marker = `\n… ${omitted} characters omitted …\n`;
  const room = Math.max(0, limit - marker.length);
  const head = Math.ceil(room / 2);
  const tail = room - head;
  return text.slice(0, head) + marker + (tail > 0 ? text.slice(text.length - tail) : '');
}

/**
 * A byte sink that keeps the first `headBytes` and a rolling window of the last
 * `tailBytes`, counting what falls in between. Memory stays O(headBytes + tailBytes)
 * whatever is pushed.
 */
export class HeadTailBuffer {
  private readonly head: Buffer[] = [];
  private headLength = 0;
  private tail: Buffer[] = [];
  private tailLength = 0;
  private total = 0;

  constructor(private readonly headBytes: number, private readonly tailBytes: number) {}

  get totalBytes(): number {
    return this.total;
  }

  get omittedBytes(): number {
    return Math.max(0, this.total - this.headLength - this.tailLength);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headLength < this.headBytes) {
      const take = Math.min(this.headBytes - this.headLength, rest.length);
      // Copy: a slice would pin the whole (possibly large) source chunk in memory.
      this.head.push(Buffer.from(rest.subarray(0, take)));
      this.headLength += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.tailBytes === 0) return;
    if (rest.length >= this.tailBytes) {
      this.tail = [Buffer.from(rest.subarray(rest.length - this.tailBytes))];
      this.tailLength = this.tailBytes;
      return;
    }
    this.tail.push(Buffer.from(rest));
    this.tailLength += rest.length;
    while (this.tailLength > this.tailBytes) {
      const first = this.tail[0]!;
      const excess = this.tailLength - this.tailBytes;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailLength -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailLength -= excess;
      }
    }
  }

  /** Head and tail as UTF-8 text, with a "… N bytes omitted …" marker when something was dropped. */
  toString(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    const omitted = this.omittedBytes;
    if (omitted === 0) return head + tail;
    return `${head}\n… ${omitted} bytes omitted …\n${tail}`;
  }
}
