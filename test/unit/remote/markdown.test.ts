import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml, renderMarkdown } from '../../../src/remote/web/markdown';

/** The web page's markdown (docs/remote.md#the-web-page): escaped first, then a small subset. */

const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "'><svg onload=alert(1)>",
  '<a href="javascript:alert(1)">x</a>',
  '[click](javascript:alert(1))',
  '[click](https://ok.example/"onmouseover="alert(1))',
  '**<b onclick=alert(1)>bold</b>**',
  '`<iframe src=//evil>`',
  '```\n</code></pre><script>alert(1)</script>\n```',
  '# <style>body{display:none}</style>',
  '- <img src=x onerror=alert(1)>',
  '&lt;script&gt; already escaped',
  '<div onclick="alert(1)">\nblock html\n</div>',
  '[ref][r]\n\n[r]: javascript:alert(1)',
  '![pic](https://evil.example/track.png "t\"onload=alert(1)")',
  '<javascript:alert(1)>',
  '[x](data:text/html,<script>alert(1)</script>)',
  '| a | <b>b</b> |\n|---|---|\n| <script>x</script> | 2 |',
  '> quoted <img src=x onerror=alert(1)>\n> - [link](https://ok.example "title\"x")',
  '~~<u>gone</u>~~',
]

test('markdown: no tag, attribute or entity from the input survives; only the tags the renderer writes appear', () => {
  const allowed = /^<\/?(p|br|h[3-6]|ul|ol|li|strong|em|del|code|pre|blockquote|hr|a)( href="https?:\/\/[^"]*" rel="noopener noreferrer nofollow" target="_blank")?>$/;
  for (const input of HOSTILE) {
    const html = renderMarkdown(input);
    for (const tag of html.match(/<[^>]*>/g) ?? []) assert.match(tag, allowed, `${JSON.stringify(input)} → ${html}`);
    assert.doesNotMatch(html, /<(script|img|svg|iframe|style|div|u\b|table|b\b)/i, html);
  }
  assert.equal(renderMarkdown('&lt;script&gt;'), '<p>&amp;lt;script&amp;gt;</p>', 'entities in the input are shown, not decoded');
});

test('markdown: the subset renders: headings, lists, code, emphasis, http links', () => {
  assert.equal(renderMarkdown('# Title\n\ntext **bold** and *em* and `a<b`'), '<h3>Title</h3><p>text <strong>bold</strong> and <em>em</em> and <code>a&lt;b</code></p>');
  assert.equal(renderMarkdown('- one\n- two\n\n1. first\n2. second'), '<ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>');
  assert.equal(renderMarkdown('```ts\nconst a = "<x>";\n```'), '<pre><code>const a = &quot;&lt;x&gt;&quot;;</code></pre>');
  assert.equal(renderMarkdown('see [docs](https://example.com/a?b=1&c=2)'), '<p>see <a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow" target="_blank">docs</a></p>');
  assert.equal(renderMarkdown('[x](javascript:alert(1))'), '<p>[x](javascript:alert(1))</p>');
  assert.equal(renderMarkdown('line one\nline two'), '<p>line one<br>line two</p>');
  assert.equal(renderMarkdown('```\nunclosed'), '<pre><code>unclosed</code></pre>', 'the TUI\'s grammar (marked): an open fence runs to the end');
  assert.equal(renderMarkdown('> a ~~b~~\n\n---'), '<blockquote><p>a <del>b</del></p></blockquote><hr>');
  assert.equal(renderMarkdown('![pic](https://x.example/p.png)'), '<p>pic</p>', 'an image is never fetched by the page');
  assert.equal(escapeHtml(`<>&"'`), '&lt;&gt;&amp;&quot;&#39;');
});
