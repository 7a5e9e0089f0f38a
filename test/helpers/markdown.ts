/**
 * Reading markdown the way GitHub renders it, for the docs tests: heading anchors and the
 * relative links of a page. Fenced code blocks are skipped (a `#` there is not a heading and
 * a `[x](y)` there is not a link).
 */

/** Lines outside fenced code blocks, with their 1-based line numbers. */
export function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const open = /^\s*(```|~~~)/.exec(line);
    if (open) {
      if (fence === null) fence = open[1]!;
      else if (line.trim().startsWith(fence)) fence = null;
      return;
    }
    if (fence === null) out.push({ line: i + 1, text: line });
  });
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces become `-`. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page, a repeated heading numbered `-1`, `-2`… as GitHub does. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = headingSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The link targets of a page that are not URLs (`other.md#anchor`, `#anchor`, `../x`). */
export function relativeLinks(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  for (const { line, text: prose } of proseLines(text)) {
    const withoutCode = prose.replace(/`[^`]*`/g, '');
    for (const m of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      out.push({ line, target });
    }
  }
  return out;
}
