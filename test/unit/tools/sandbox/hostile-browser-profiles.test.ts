import '../../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { ToolResult } from '../../../../src/tools/types';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, realSandbox, type SandboxFixture } from '../../../helpers/sandbox-fixture';

const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

/**
 * Browser profiles hold session cookies (Firefox's `cookies.sqlite` is plain SQLite), saved
 * passwords and the history — where the URL of `legion serve --web`, token included, is kept.
 * The hidden list named `~/.mozilla` and `~/.config/<chrome…>`, but Ubuntu's Firefox is a snap,
 * whose profile lives under `~/snap/firefox/common/.mozilla`, and Flatpak browsers keep theirs
 * under `~/.var/app/<id>/`: a sandboxed command read them all (with `network: all` it could then
 * approve requests on the web page with the token from the history). Real sandbox, fake HOME.
 */
const PROFILES = [
  'snap/firefox/common/.mozilla/firefox/abcd.default/cookies.sqlite',
  'snap/firefox/common/.mozilla/firefox/abcd.default/places.sqlite',
  'snap/chromium/common/chromium/Default/Cookies',
  'snap/thunderbird/common/.thunderbird/abcd.default/logins.json',
  '.var/app/org.mozilla.firefox/.mozilla/firefox/abcd.default/cookies.sqlite',
  '.var/app/org.mozilla.Thunderbird/.thunderbird/abcd.default/logins.json',
  '.var/app/com.google.Chrome/config/google-chrome/Default/Cookies',
  '.var/app/org.chromium.Chromium/config/chromium/Default/Cookies',
  '.var/app/com.brave.Browser/config/BraveSoftware/Brave-Browser/Default/Cookies',
  '.var/app/com.microsoft.Edge/config/microsoft-edge/Default/Cookies',
  '.config/vivaldi/Default/Cookies',
  '.config/opera/Cookies',
  '.librewolf/abcd.default/cookies.sqlite',
  '.config/mozilla/firefox/abcd.default/cookies.sqlite',
  '.var/app/org.mozilla.firefox/config/mozilla/firefox/abcd.default/cookies.sqlite',
  '.config/google-chrome-beta/Default/Cookies',
  '.config/google-chrome-unstable/Default/Cookies',
];

let fx: SandboxFixture;
let sandbox: ShellSandbox;
before(async () => {
  fx = await makeSandboxFixture();
  PROFILES.forEach((rel, i) => {
    const file = join(fx.home, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `http://127.0.0.1:7420/?token=BROWSER-${i}-MARKER\n`);
  });
  sandbox = realSandbox(fx, probe);
});
after(async () => {
  sandbox?.dispose();
  await fx?.cleanup();
});

function run(command: string): Promise<ToolResult> {
  return executeTool(createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox }), { command }, makeToolContext(fx.ws));
}

test('sandboxed: snap and Flatpak browser and mail profiles (cookies, logins, the web page\'s token in the history) are unreadable', { skip }, async () => {
  const command = PROFILES.map((rel) => `cat '${join(fx.home, rel)}'`).join('; ') + `; grep -rs MARKER ${fx.home}; true`;
  const result = await run(command);
  assert.doesNotMatch(result.content, /BROWSER-\d+-MARKER/, result.content.slice(0, 2000));
});
