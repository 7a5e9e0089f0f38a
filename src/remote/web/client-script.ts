/**
 * The page's script, served as /app.js (docs/remote.md#the-web-page). Plain browser
 * JavaScript, no build step. Safety rule: every string from the core is put in the page with
 * textContent; the only innerHTML is a transcript item's `html`, which the server produced
 * with renderMarkdown (escaped first). Decisions go by request id to POST /api/approvals with
 * the token in a header.
 */
export const APP_JS = String.raw`(function () {
  'use strict';
  var token = document.querySelector('meta[name="legion-token"]').getAttribute('content');
  var lanes = new Map();
  var rows = new Map();
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function api(method, path, body) {
    var init = { method: method, headers: { 'x-legion-token': token } };
    if (body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
    return fetch(path, init).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (json) {
        if (!res.ok) throw new Error(json.error || ('HTTP ' + res.status));
        return json;
      });
    });
  }

  function say(text) { $('decided').textContent = text; }

  function renderItems(body, items) {
    items.forEach(function (item) {
      var node;
      if (item.kind === 'text') { node = el('div', 'msg ' + item.role); node.innerHTML = item.html; }
      else if (item.kind === 'tool') { node = el('div', 'tool', '\u25b8 ' + item.name + (item.key ? ' ' + item.key : '')); }
      else { node = el('div', 'result' + (item.isError ? ' error' : ''), '\u21b3 ' + item.summary); }
      body.appendChild(node);
    });
    body.scrollTop = body.scrollHeight;
  }

  function lane(info) {
    var found = lanes.get(info.id);
    if (found) return found;
    var root = el('article', 'lane');
    root.setAttribute('data-session-id', info.id);
    var title = el('div', 'title');
    title.appendChild(el('span', 'name', info.initiatorId + ' \u2192 ' + info.responderId + ' \u00b7 ' + info.name));
    var status = el('span', 'status', info.status || 'idle');
    status.setAttribute('data-status', info.status || 'idle');
    title.appendChild(status);
    var body = el('div', 'body');
    var stream = el('div', 'stream');
    root.appendChild(title);
    root.appendChild(body);
    root.appendChild(stream);
    if (info.responderId === 'user') {
      var form = el('form', 'answer');
      var input = el('input');
      input.setAttribute('placeholder', 'answer ' + info.initiatorId);
      input.setAttribute('aria-label', 'Answer');
      form.appendChild(input);
      form.appendChild(el('button', '', 'Send'));
      form.addEventListener('submit', function (e) {
        e.preventDefault();
        if (!input.value.trim()) return;
        api('POST', '/api/reply', { sessionId: info.id, text: input.value }).then(function () { input.value = ''; }, function (err) { say(err.message); });
      });
      root.appendChild(form);
    }
    var entry = { root: root, body: body, stream: stream, status: status };
    lanes.set(info.id, entry);
    $('lanes').appendChild(root);
    return entry;
  }

  function setStatus(entry, participantId, status) {
    entry.status.textContent = participantId + ': ' + status;
    entry.status.setAttribute('data-status', status);
  }

  function marked() {
    return Array.prototype.slice.call(document.querySelectorAll('#requests input.mark:checked')).map(function (box) { return box.value; });
  }

  function countPending() {
    $('pending-count').textContent = String(rows.size);
    var n = marked().length;
    $('approve-marked').textContent = 'Approve marked' + (n ? ' (' + n + ')' : '');
    $('reject-marked').textContent = 'Reject marked' + (n ? ' (' + n + ')' : '');
  }

  function decide(ids, decision) {
    if (!ids.length) { say('mark requests first'); return; }
    var body = { requestIds: ids, decision: decision };
    var reason = $('reason').value.trim();
    if (decision === 'rejected' && reason) body.reason = reason;
    api('POST', '/api/approvals', body).then(function () {
      if (decision === 'rejected') $('reason').value = '';
    }, function (err) { say(err.message); });
  }

  function addRequest(r) {
    // The same id again: the cascade climbed (new approver) or a restart re-offered it.
    var old = rows.get(r.requestId);
    var wasMarked = old ? old.querySelector('input.mark').checked : false;
    if (old) { old.remove(); rows.delete(r.requestId); }
    var row = el('li', 'request');
    row.setAttribute('data-request-id', r.requestId);
    var head = el('div', 'head');
    var box = el('input', 'mark');
    box.type = 'checkbox';
    box.value = r.requestId;
    box.setAttribute('aria-label', 'mark ' + r.requestId);
    box.checked = wasMarked;
    box.addEventListener('change', countPending);
    head.appendChild(box);
    var what = el('div', 'what');
    what.appendChild(el('div', 'line', r.requestId + ' \u00b7 ' + r.participantId + ' wants ' + r.toolName + (r.key ? ' ' + r.key : '')));
    what.appendChild(el('div', 'meta', r.chain.join(' \u2192 ') + (r.approverId !== 'user' ? ' \u00b7 waits on ' + r.approverId : '') + (r.reason ? ' \u00b7 ' + r.reason : '')));
    head.appendChild(what);
    row.appendChild(head);
    var details = el('details');
    details.appendChild(el('summary', '', 'input'));
    details.appendChild(el('pre', '', r.input));
    row.appendChild(details);
    var actions = el('div', 'actions');
    var yes = el('button', 'approve', 'Approve');
    yes.type = 'button';
    yes.addEventListener('click', function () { decide([r.requestId], 'approved'); });
    var no = el('button', 'reject', 'Reject');
    no.type = 'button';
    no.addEventListener('click', function () { decide([r.requestId], 'rejected'); });
    actions.appendChild(yes);
    actions.appendChild(no);
    row.appendChild(actions);
    rows.set(r.requestId, row);
    $('requests').appendChild(row);
    countPending();
  }

  function removeRequest(id, text) {
    var row = rows.get(id);
    if (row) { row.remove(); rows.delete(id); }
    if (text) say(text);
    countPending();
  }

  function decidedText(by) {
    if (by === 'user') return 'in the terminal';
    if (by === 'remote:web') return 'on the web page';
    if (by.indexOf('remote:telegram:') === 0) return 'in Telegram by ' + by.slice(16);
    return 'by ' + by;
  }

  // Events that arrive while a snapshot (state, a lane's history) is loading are applied and
  // kept: the snapshot may have been taken before them, so once it is drawn the ones after its
  // position (seq) are applied again (a request raised while the page reconnected would
  // otherwise vanish when the older snapshot replaced the rows).
  var loading = 0;
  var recent = [];
  function startLoad() { loading += 1; }
  function endLoad() { loading -= 1; if (loading === 0) recent = []; }
  function replayAfter(seq, wanted) {
    recent.forEach(function (r) { if (r.seq > seq && wanted(r.ev)) apply(r.ev); });
  }

  function loadHistory(id, entry) {
    startLoad();
    api('GET', '/api/history?session=' + encodeURIComponent(id)).then(function (h) {
      entry.body.textContent = '';
      renderItems(entry.body, h.items);
      replayAfter(h.seq, function (ev) { return ev.type === 'message-add' && ev.sessionId === id; });
      endLoad();
    }, function (err) { say(err.message); endLoad(); });
  }

  function loadState() {
    startLoad();
    return api('GET', '/api/state').then(function (state) {
      $('run').textContent = 'run ' + state.runId;
      state.sessions.forEach(function (s) {
        var entry = lane(s);
        setStatus(entry, s.responderId, s.status);
        loadHistory(s.id, entry);
      });
      rows.forEach(function (_row, id) { removeRequest(id); });
      state.pending.forEach(addRequest);
      replayAfter(state.seq, function (ev) { return ev.type === 'approval-request' || ev.type === 'approval-resolve' || ev.type === 'agent-status' || ev.type === 'session-open'; });
      endLoad();
    }, function (err) { say(err.message); endLoad(); });
  }

  function onEvent(e) {
    var ev = JSON.parse(e.data);
    if (loading > 0 && recent.length < 10000) recent.push({ seq: Number(e.lastEventId), ev: ev });
    apply(ev);
  }

  function apply(ev) {
    var entry;
    switch (ev.type) {
      case 'session-open':
        lane({ id: ev.sessionId, initiatorId: ev.initiatorId, responderId: ev.responderId, name: ev.name, status: 'idle' });
        break;
      case 'message-add':
        entry = lanes.get(ev.sessionId);
        if (!entry) break;
        entry.stream.textContent = '';
        renderItems(entry.body, ev.items);
        break;
      case 'text-delta':
        entry = lanes.get(ev.sessionId);
        if (entry) entry.stream.textContent += ev.text;
        break;
      case 'agent-status':
        entry = lanes.get(ev.sessionId);
        if (entry) setStatus(entry, ev.participantId, ev.status);
        break;
      case 'approval-request':
        addRequest(ev.request);
        break;
      case 'approval-resolve':
        removeRequest(ev.requestId, ev.requestId + ' ' + ev.decision + ' ' + decidedText(ev.decidedBy) + (ev.reason && ev.reason !== ev.decision + ' by ' + ev.decidedBy ? ': ' + ev.reason : ''));
        break;
      case 'notice':
        var li = el('li', 'notice', ev.level + ': ' + ev.message);
        $('notice-list').prepend(li);
        while ($('notice-list').children.length > 50) $('notice-list').lastChild.remove();
        break;
      case 'run-end':
        $('conn').textContent = 'run ended';
        break;
    }
  }

  function connect() {
    var source = new EventSource('/events?token=' + encodeURIComponent(token));
    source.onopen = function () {
      $('conn').textContent = 'live';
      $('conn').setAttribute('data-state', 'live');
      loadState();
    };
    source.onerror = function () {
      $('conn').textContent = 'reconnecting\u2026';
      $('conn').setAttribute('data-state', 'down');
    };
    source.onmessage = onEvent;
  }

  $('approve-marked').addEventListener('click', function () { decide(marked(), 'approved'); });
  $('reject-marked').addEventListener('click', function () { decide(marked(), 'rejected'); });
  connect();
})();
`;
