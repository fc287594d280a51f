// End-to-end tests of the inspector in Debian's headless Chromium, driven by
// playwright-core (no browser download). The page is the built `dist/`,
// served from this process on 127.0.0.1; the damaged files come from
// `felix-storage demo`; the JSON report is compared with
// `felix-storage inspect --json` on the same file.
//
// Env: DIST_DIR (built inspector), FELIX_STORAGE (the CLI binary),
//      ARTIFACTS (where screenshots go).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile, mkdtemp, mkdir } from 'node:fs/promises';
import { execFileSync, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, extname, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const DIST = resolve(process.env.DIST_DIR ?? '../../inspector-web/dist');
const CLI = resolve(process.env.FELIX_STORAGE ?? '../../target/debug/felix-storage');
const ARTIFACTS = resolve(process.env.ARTIFACTS ?? '../../artifacts');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };

let server, base, browser, sample;

before(async () => {
  server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const file = join(DIST, path === '/' ? 'index.html' : path);
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${server.address().port}/`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  sample = await mkdtemp(join(tmpdir(), 'felix-e2e-'));
  execFileSync(CLI, ['demo', join(sample, 'root')]);
  await mkdir(ARTIFACTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  server?.close();
});

function shard(name) {
  const out = execFileSync('ls', [join(sample, 'root')]).toString().split('\n');
  return join(sample, 'root', out.find((d) => d.startsWith(name)));
}

async function page() {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1300, height: 1400 } });
  const p = await context.newPage();
  p.requests = [];
  p.on('request', (r) => p.requests.push(r.url()));
  p.errors = [];
  p.on('pageerror', (e) => p.errors.push(e.message));
  p.workers = [];
  p.on('worker', (w) => p.workers.push(w.url()));
  return p;
}

test('a torn .log shows its finding, highlighted bytes, and the same report as the CLI', async () => {
  const p = await page();
  await p.goto(base);
  const file = join(shard('acme_default_payments_0'), '00000000000000000001.log');
  await p.setInputFiles('#file-input', file);
  const row = p.locator('#problems tr[data-kind="Truncated"]');
  await row.waitFor({ timeout: 15000 });
  assert.equal(await row.getAttribute('data-position'), '1064');
  assert.match(await row.locator('td.pos').textContent(), /1064 \(0x428\)/);
  // The hex view scrolled to the damage and marks those bytes.
  const damaged = p.locator('#hex span[data-pos="1064"]');
  await damaged.waitFor();
  assert.match(await damaged.getAttribute('class'), /\bdmg\b/);
  assert.match(await damaged.getAttribute('class'), /\bsel\b/);
  assert.ok(await damaged.isVisible(), 'the damaged byte is in view');
  await damaged.hover();
  assert.match(await p.locator('#hex-hover').textContent(), /byte 1064: payload_len = 58 \(record 59, bytes 1064\.\.1068\)/);
  // The record table shows every record of this small file, the torn one selected.
  assert.equal(await p.locator('#records .rec span:first-child').first().textContent(), '47');
  const torn = p.locator('#records .rec.selected');
  assert.equal(await torn.locator('span').first().textContent(), '59');
  assert.ok(await torn.isVisible());
  // Download the JSON report and compare it with the CLI on the same file.
  const [download] = await Promise.all([p.waitForEvent('download'), p.click('#download-json')]);
  const ours = JSON.parse(await readFile(await download.path(), 'utf8'));
  const cliRun = spawnSync(CLI, ['inspect', '--json', file]);
  assert.equal(cliRun.status, 1);
  const cli = JSON.parse(cliRun.stdout.toString());
  assert.equal(ours.report_version, 1);
  const strip = (f) => ({ ...f, path: undefined });
  assert.deepEqual(ours.files.map(strip), cli.files.map(strip));
  // Copy the permalink, open it in a fresh page: the same findings, no bytes.
  await p.click('#permalink');
  const link = await p.locator('#permalink-url').inputValue();
  assert.ok(link.startsWith(base + '#r='), link);
  const fresh = await page();
  await fresh.goto(link);
  await fresh.locator('#shared-banner').waitFor();
  const shared = fresh.locator('#problems tr[data-kind="Truncated"]');
  await shared.waitFor();
  assert.equal(await shared.getAttribute('data-position'), '1064');
  for (const url of [...p.requests, ...fresh.requests]) {
    assert.ok(url.startsWith(base) || url.startsWith('blob:') || url.startsWith('data:'), `request left the page: ${url}`);
  }
  assert.deepEqual(p.errors, []);
  assert.ok(p.workers.some((u) => u.endsWith('/felix-scan-worker_loader.js')), `the scan ran in a Web Worker: ${p.workers}`);
  await p.screenshot({ path: join(ARTIFACTS, 'inspector-torn-tail.png'), fullPage: true });
});

test('the built-in sample shows every kind of damage, and n/p walk the problems', async () => {
  const p = await page();
  await p.goto(base);
  await p.click('#sample');
  await p.locator('#problems').waitFor({ timeout: 15000 });
  const kinds = await p.locator('#problems tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.kind));
  assert.deepEqual(kinds.sort(), ['IndexEntryMismatch', 'RecordChecksum', 'Truncated']);
  assert.equal(await p.locator('#overview tbody tr').count(), 7);
  const current = p.locator('#problems tr.current');
  assert.equal(await current.getAttribute('data-kind'), 'IndexEntryMismatch', 'the first problem is selected on load');
  await p.locator('.app').press('n');
  await p.locator('.app').press('n');
  assert.equal(await current.getAttribute('data-kind'), 'Truncated');
  await p.locator('.app').press('p');
  assert.equal(await current.getAttribute('data-kind'), 'RecordChecksum');
  const pos = await current.getAttribute('data-position');
  await p.locator(`#hex span[data-pos="${pos}"].dmg`).waitFor();
  // Jump by record offset: the record's bytes are selected and its table row follows.
  await p.fill('#jump', '@55');
  await p.press('#jump', 'Enter');
  const selectedRow = p.locator('#records .rec.selected');
  await selectedRow.waitFor();
  assert.match(await selectedRow.locator('span').first().textContent(), /^55$/);
  // Jump by byte position, then click a byte: its record is selected.
  await p.fill('#jump', '0x40');
  await p.press('#jump', 'Enter');
  await p.locator('#hex span[data-pos="64"].sel').waitFor();
  await p.locator('#hex span[data-pos="64"]').click();
  await p.locator('#records .rec.selected').waitFor();
  await p.screenshot({ path: join(ARTIFACTS, 'inspector-sample.png'), fullPage: true });
});

test('a whole shard folder is inspected with its cross-file checks', async () => {
  const p = await page();
  await p.goto(base);
  const dir = shard('acme_default_clicks_0');
  const files = execFileSync('ls', [dir]).toString().trim().split('\n').map((f) => join(dir, f));
  // A folder drop reaches the page as files with relative paths; emulate it with a synthetic drop.
  const payload = await Promise.all(files.map(async (f) => ({ name: f.split('/').pop(), bytes: [...await readFile(f)] })));
  const folder = dir.split('/').pop();
  await p.evaluate(({ payload, folder }) => {
    const dt = new DataTransfer();
    for (const { name, bytes } of payload) {
      const file = new File([new Uint8Array(bytes)], name);
      Object.defineProperty(file, 'webkitRelativePath', { value: `${folder}/${name}` });
      dt.items.add(file);
    }
    const files = [...dt.files].map((f, i) => { Object.defineProperty(f, 'webkitRelativePath', { value: `${folder}/${payload[i].name}` }); return f; });
    const items = files.map((f) => ({ webkitGetAsEntry: () => ({ isDirectory: false, fullPath: `/${folder}/${f.name}`, file: (ok) => ok(f) }) }));
    const ev = new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt });
    Object.defineProperty(ev.dataTransfer, 'items', { value: Object.assign(items, { length: items.length }) });
    document.querySelector('#dropzone').dispatchEvent(ev);
  }, { payload, folder });
  const row = p.locator('#problems tr[data-kind="IndexEntryMismatch"]');
  await row.waitFor({ timeout: 15000 });
  const shardCells = await p.locator('#overview tbody tr td:first-child').allTextContents();
  assert.ok(shardCells.every((c) => c === folder), shardCells.join(','));
});
