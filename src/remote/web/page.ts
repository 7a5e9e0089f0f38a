import { escapeHtml } from './markdown';
import { APP_JS } from './client-script';

export { APP_JS };

/**
 * The page shell. It holds no data: the script (served as /app.js, never inline, so the CSP
 * can say `script-src 'self'`) loads the state and follows the event stream. The token sits
 * in a meta tag, escaped, for the script's requests.
 */
export function pageHtml(token: string): string {
  const t = escapeHtml(encodeURIComponent(token));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="legion-token" content="${escapeHtml(token)}">
<title>Legion</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app.css?token=${t}">
<script src="/app.js?token=${t}" defer></script>
</head>
<body>
<header><h1>Legion</h1><span id="run"></span><span id="conn" data-state="connecting">connecting…</span></header>
<section id="queue" aria-label="Approval queue">
  <h2>Approvals <span id="pending-count">0</span></h2>
  <div id="batch">
    <input id="reason" type="text" maxlength="2000" placeholder="reason for rejecting (optional)" aria-label="Reason for rejecting">
    <button id="approve-marked" type="button">Approve marked</button>
    <button id="reject-marked" type="button">Reject marked</button>
  </div>
  <ul id="requests"></ul>
  <p id="decided" role="status"></p>
</section>
<section id="lanes" aria-label="Sessions"></section>
<section id="notices" aria-label="Notices"><h2>Notices</h2><ul id="notice-list"></ul></section>
</body>
</html>
`;
}

export const APP_CSS = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:#111418;color:#e6e6e6}
header{display:flex;gap:12px;align-items:baseline;padding:8px 12px;background:#1b2027;position:sticky;top:0;z-index:1}
h1{font-size:18px;margin:0}h2{font-size:15px;margin:0 0 6px}
#run{color:#9aa4b1;font-size:12px;overflow:hidden;text-overflow:ellipsis}
#conn{margin-left:auto;font-size:12px;color:#e0b35a}#conn[data-state=live]{color:#6cc36c}
section{padding:8px 12px}
#queue{border-bottom:1px solid #2b323c}
#batch{display:flex;flex-wrap:wrap;gap:6px;margin-bottom:6px}
#reason{flex:1 1 200px;min-width:0;padding:6px;background:#0c0f12;color:#e6e6e6;border:1px solid #39424e;border-radius:4px}
button{padding:6px 10px;border-radius:4px;border:1px solid #39424e;background:#252c35;color:#e6e6e6;cursor:pointer;min-height:34px}
button.approve,#approve-marked{border-color:#2f6b35}button.reject,#reject-marked{border-color:#7a3434}
#requests{list-style:none;margin:0;padding:0}
.request{border:1px solid #39424e;border-radius:6px;padding:6px 8px;margin-bottom:6px;background:#181d23}
.request .head{display:flex;gap:8px;align-items:flex-start}
.request .what{flex:1;word-break:break-word}.request .meta{color:#9aa4b1;font-size:12px}
.request .actions{display:flex;gap:6px;margin-top:4px}
.request pre{max-height:200px;overflow:auto}
#decided{color:#9aa4b1;font-size:12px;min-height:1em;margin:4px 0 0}
#lanes{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:10px}
.lane{border:1px solid #2b323c;border-radius:6px;background:#161a20;display:flex;flex-direction:column;min-width:0}
.lane>.title{display:flex;gap:8px;padding:6px 8px;border-bottom:1px solid #2b323c;font-weight:600}
.lane .status{margin-left:auto;font-weight:400;font-size:12px;color:#9aa4b1}
.lane .status[data-status=thinking],.lane .status[data-status=running-tool]{color:#6cb0e0}
.lane .status[data-status=waiting-approval]{color:#e0b35a}.lane .status[data-status=error]{color:#e06c6c}
.lane .body{padding:6px 8px;max-height:60vh;overflow:auto;word-break:break-word}
.msg{margin:4px 0}.msg.user{color:#b7c7ff}.msg p{margin:4px 0}
.tool{font-family:ui-monospace,monospace;font-size:12px;color:#c9a0ff}
.result{font-family:ui-monospace,monospace;font-size:12px;color:#8fa08f;white-space:pre-wrap}.result.error{color:#e06c6c}
.stream{white-space:pre-wrap;color:#cfcfcf}
pre{background:#0c0f12;padding:6px;border-radius:4px;overflow:auto}code{font-family:ui-monospace,monospace}
.answer{display:flex;gap:6px;padding:6px 8px;border-top:1px solid #2b323c}.answer input{flex:1;min-width:0;padding:6px;background:#0c0f12;color:#e6e6e6;border:1px solid #39424e;border-radius:4px}
#notice-list{list-style:none;padding:0;margin:0;font-size:12px;color:#9aa4b1}
a{color:#6cb0e0}
@media (max-width:600px){#lanes{grid-template-columns:1fr}.lane .body{max-height:none}header{flex-wrap:wrap}}
`;
