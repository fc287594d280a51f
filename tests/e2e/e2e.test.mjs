// End-to-end tests of the inspector in Debian's headless Chromium, driven by
// playwright-core (no browser download). The page is the built `dist/`,
// served from this process on 127.0.0.1; the damaged files come from
// `felix-storage demo`; the JSON report is compared byte for byte with
// `felix-storage inspect --json` on the same file. Markdown downloads are
// read with markdown-it (GitHub-style tables and link detection on, raw
// HTML passed through) to prove nothing in them is active; axe-core checks
// the page's accessibility.
//
// Env: DIST_DIR (built inspector), FELIX_STORAGE (the CLI binary),
//      ARTIFACTS (where screenshots go).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile, writeFile, mkdtemp, mkdir, readdir, copyFile, open, rm } from 'node:fs/promises';
import { execFileSync, spawnSync } from 'node:child_process';
import { deflateRawSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, extname, resolve, dirname, basename } from 'node:path';
import { chromium } from 'playwright-core';
import { segmentHeader, recordHeader, recordHeaderInto } from './felix-bytes.mjs';
import MarkdownIt from 'markdown-it';

const require = createRequire(import.meta.url);
const DIST = resolve(process.env.DIST_DIR ?? '../../inspector-web/dist');
const CLI = resolve(process.env.FELIX_STORAGE ?? '../../target/debug/felix-storage');
const ARTIFACTS = resolve(process.env.ARTIFACTS ?? '../../artifacts');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };
const AXE = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');

let server, base, browser, sample, scratchRoot;
const pages = [];

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
  // Every folder a test makes goes under one root, removed when the run ends.
  scratchRoot = await mkdtemp(join(tmpdir(), 'felix-e2e-'));
  sample = await scratch('sample-');
  execFileSync(CLI, ['demo', join(sample, 'root')]);
  await mkdir(ARTIFACTS, { recursive: true });
});

after(async () => {
  try {
    // Every page: no uncaught error (a Rust panic surfaces as one), no request off the page's origin.
    for (const p of pages) {
      assert.deepEqual(p.errors, [], `uncaught errors on ${p.url()}`);
      assert.deepEqual(p.panics, [], 'a panic was logged');
      for (const url of p.requests) {
        assert.ok(url.startsWith(base) || url.startsWith('blob:') || url.startsWith('data:'), `request left the page: ${url}`);
      }
    }
  } finally {
    await browser?.close();
    server?.close();
    if (scratchRoot && !process.env.KEEP_SCRATCH) await rm(scratchRoot, { recursive: true, force: true });
    // Kept for a look: say where (a run leaves nothing else to find it by).
    else if (scratchRoot) process.stderr.write(`KEEP_SCRATCH: the run's folders are kept in ${scratchRoot}\n`);
  }
});

/** A fresh folder for one test, under the run's scratch root (`KEEP_SCRATCH=1` keeps it for a look after a failure). */
function scratch(prefix) {
  return mkdtemp(join(scratchRoot, prefix));
}

function shard(name) {
  const out = execFileSync('ls', [join(sample, 'root')]).toString().split('\n');
  return join(sample, 'root', out.find((d) => d.startsWith(name)));
}

async function page(viewport = { width: 1300, height: 1400 }) {
  const context = await browser.newContext({ acceptDownloads: true, viewport });
  const p = await context.newPage();
  p.requests = [];
  p.on('request', (r) => p.requests.push(r.url()));
  p.errors = [];
  p.on('pageerror', (e) => p.errors.push(e.message));
  p.panics = [];
  p.on('console', (m) => { if (/panicked/.test(m.text())) p.panics.push(m.text()); });
  p.workers = [];
  p.on('worker', (w) => p.workers.push(w.url()));
  pages.push(p);
  return p;
}

// A fresh page with the built-in sample opened, once `ready` shows.
async function sampleOpened(ready = '#problems') {
  const p = await page();
  await p.goto(base);
  await p.click('#sample');
  await p.locator(ready).first().waitFor({ timeout: 15000 });
  return p;
}

// The page as on a machine of two cores (the hash waits for the verdict on a large drop), ready for files.
async function twoCorePage() {
  const p = await page();
  await p.addInitScript(() => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => 2 }));
  await p.goto(base);
  await p.locator('#file-input').waitFor({ state: 'attached', timeout: 15000 });
  return p;
}

// A drop as a browser delivers it, on the element `selector`: files with relative paths (`folder/name`) or bare names.
async function dropOn(p, selector, files) {
  const payload = await Promise.all(files.map(async ({ path, bytes, from }) => ({ path, bytes: [...(bytes ?? await readFile(from))] })));
  // The page mounts once its wasm has loaded, after `goto` resolves: drop on the target only once it exists.
  await p.locator(selector).waitFor({ state: 'attached', timeout: 15000 });
  await p.evaluate(({ payload, selector }) => {
    const dt = new DataTransfer();
    const made = payload.map(({ path, bytes }) => new File([new Uint8Array(bytes)], path.split('/').pop()));
    made.forEach((f) => dt.items.add(f));
    const items = made.map((f, i) => ({ webkitGetAsEntry: () => ({ isDirectory: false, fullPath: `/${payload[i].path}`, file: (ok) => ok(f) }) }));
    const ev = new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt });
    Object.defineProperty(ev.dataTransfer, 'items', { value: Object.assign(items, { length: items.length }) });
    document.querySelector(selector).dispatchEvent(ev);
  }, { payload, selector });
}

async function drop(p, files) {
  await dropOn(p, '#dropzone', files);
}

async function folder(dir) {
  const name = basename(dir);
  return (await readdir(dir)).sort().map((f) => ({ path: `${name}/${f}`, from: join(dir, f) }));
}

// A permalink as the page makes them: #s= + base64url(raw deflate(JSON)).
function link(envelope) {
  return `${base}#s=${deflateRawSync(Buffer.from(JSON.stringify(envelope))).toString('base64url')}`;
}

function cliReport(args, cwd) {
  const run = spawnSync(CLI, ['inspect', '--json', ...args], { cwd, maxBuffer: 256 << 20 });
  assert.ok(run.status === 0 || run.status === 1, run.stderr.toString());
  return run.stdout.toString();
}

// Reads a Markdown export as a GitHub-style reader would; returns what is active in it.
function readMarkdown(md) {
  const html = new MarkdownIt({ html: true, linkify: true }).render(md);
  const active = [...html.matchAll(/<(a|img|script|iframe|svg|[a-z]+ [^>]*on\w+=)[\s>]/gi)].map((m) => m[0]);
  const headings = [...html.matchAll(/<h(\d)>(.*?)<\/h\1>/g)].map((m) => m[2]);
  const tables = [...html.matchAll(/<tbody>([\s\S]*?)<\/tbody>/g)].map((m) => (m[1].match(/<tr>/g) ?? []).length);
  return { html, active, headings, tables };
}

// Every rule axe runs by default (WCAG 2 A and AA, and its best practices), every impact.
async function axeViolations(p) {
  await p.evaluate(AXE);
  const result = await p.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.map((v) => `${v.impact} ${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target).join(' ')}`);
}

async function download(p, button) {
  const [d] = await Promise.all([p.waitForEvent('download'), p.click(button)]);
  return readFile(await d.path(), 'utf8');
}

test('a torn .log shows its finding, highlighted bytes, and byte for byte the CLI report; its permalink is a claim until the file is dropped', async () => {
  const p = await page();
  await p.goto(base);
  const dir = shard('acme_default_payments_0');
  const file = join(dir, '00000000000000000001.log');
  await p.setInputFiles('#file-input', file);
  const row = p.locator('#problems [role=row][data-kind="Truncated"]');
  await row.waitFor({ timeout: 15000 });
  assert.equal(await row.getAttribute('data-position'), '1064');
  assert.match(await row.locator('.pos').textContent(), /1064 \(0x428\)/);
  // The hex view scrolled to the damage and marks those bytes.
  const damaged = p.locator('#hex span[data-pos="1064"]');
  await damaged.waitFor();
  assert.match(await damaged.getAttribute('class'), /\bdmg\b/);
  assert.match(await damaged.getAttribute('class'), /\bsel\b/);
  assert.ok(await damaged.isVisible(), 'the damaged byte is in view');
  await damaged.hover();
  // The field's value shows once the hex window's bytes are read (a moment, under load).
  const hovered = /byte 1064: payload_len = 58 \(record 59, bytes 1064\.\.1068\) — damaged: Truncated/;
  await p.waitForFunction((re) => new RegExp(re).test(document.querySelector('#hex-hover').textContent), hovered.source, { timeout: 15000 })
    .catch(() => {});
  assert.match(await p.locator('#hex-hover').textContent(), hovered);
  // The record table shows every record of this small file, the torn one selected.
  assert.equal(await p.locator('#records .rec span:first-child').first().textContent(), '47');
  const torn = p.locator('#records .rec.selected');
  assert.equal(await torn.locator('span').first().textContent(), '59');
  assert.ok(await torn.isVisible());
  // The JSON download is byte for byte what the CLI prints for the same file
  // (offered once the file's hash, computed beside the scan, is in).
  await p.locator('#hash-timing').waitFor({ timeout: 15000 });
  const ours = await download(p, '#download-json');
  assert.equal(ours, cliReport(['00000000000000000001.log'], dir));
  assert.equal(JSON.parse(ours).files[0].hash.algorithm, 'blake3');
  // The permalink says who shared it and when; opened fresh, it is a claim.
  await p.fill('#shared-by-input', 'broker 7 <b>on-call</b>');
  await p.click('#permalink');
  const url = await p.locator('#permalink-url').inputValue();
  assert.ok(url.startsWith(base + '#s='), url);
  const fresh = await page();
  await fresh.goto(url);
  await fresh.locator('#shared-banner').waitFor();
  assert.equal(await fresh.locator('#shared-by').textContent(), 'broker 7 <b>on-call</b>');
  assert.match(await fresh.locator('#shared-build').textContent(), /^felix-inspector \d/);
  assert.match(await fresh.locator('#shared-made').textContent(), /^20\d\d-/);
  assert.equal(await fresh.locator('#check-status').getAttribute('data-state'), 'unchecked');
  assert.match(await fresh.locator('#check-status').textContent(), /Not checked against files/);
  assert.equal(await fresh.locator('#overview td.check').getAttribute('data-check'), 'unchecked');
  assert.equal(await fresh.locator('#problems [role=row][data-kind="Truncated"]').getAttribute('data-position'), '1064');
  await fresh.locator('#needs-files').waitFor();
  // A report alone holds no bytes: the link to bytes says to drop the files, not to select some.
  assert.deepEqual(await fresh.locator('#permalink-at').evaluate((b) => [b.disabled, b.title]),
    [true, 'drop the files to select their bytes: a shared report alone holds none']);
  // Drop the same file: the row matches.
  await fresh.setInputFiles('#file-input', file);
  await fresh.locator('#overview td.check[data-check="matches"]').waitFor({ timeout: 15000 });
  assert.equal(await fresh.locator('#check-status').getAttribute('data-state'), 'checked');
  assert.match(await fresh.locator('#check-status').textContent(), /1 match, 0 differ/);
  await fresh.locator('#hex span[data-pos="1064"].dmg').waitFor();
  assert.equal(await fresh.locator('#permalink-at').getAttribute('title'), null, 'with the file dropped its bytes can be linked');
  // Drop a changed copy: the row differs, and says why.
  const changedDir = await scratch('changed-');
  const bytes = await readFile(file);
  bytes[200] ^= 0x01;
  await writeFile(join(changedDir, '00000000000000000001.log'), bytes);
  await fresh.setInputFiles('#file-input', join(changedDir, '00000000000000000001.log'));
  const differs = fresh.locator('#overview td.check[data-check="differs"]');
  await differs.waitFor({ timeout: 15000 });
  const reasons = await differs.locator('.reasons li').allTextContents();
  assert.match(reasons[0], /^hash differs \(blake3\): the report says [0-9a-f]{12}…, the file is [0-9a-f]{12}…$/);
  assert.ok(reasons.some((r) => /^added: \w+ at byte \d+$/.test(r)), reasons.join(' | '));
  assert.ok(p.workers.some((u) => u.endsWith('/felix-scan-worker_loader.js')), `the scan ran in a Web Worker: ${p.workers}`);
  await p.screenshot({ path: join(ARTIFACTS, 'inspector-torn-tail.png'), fullPage: true });
  await fresh.screenshot({ path: join(ARTIFACTS, 'inspector-shared-differs.png'), fullPage: true });
});

test('the built-in sample: every kind of damage, n/p and the keyboard, the file map jumps', async () => {
  const p = await sampleOpened();
  const kinds = await p.locator('#problems .gridbody [role=row]').evaluateAll((rows) => rows.map((r) => r.dataset.kind));
  assert.deepEqual(kinds.sort(), ['IndexEntryMismatch', 'RecordChecksum', 'Truncated']);
  assert.equal(await p.locator('#overview tbody tr').count(), 7);
  const current = p.locator('#problems .problem.current');
  assert.equal(await current.getAttribute('data-kind'), 'RecordChecksum', 'the most severe problem is selected on load');
  await p.locator('#sample').focus();
  await p.keyboard.press('n');
  assert.equal(await current.getAttribute('data-kind'), 'Truncated');
  await p.keyboard.press('p');
  assert.equal(await current.getAttribute('data-kind'), 'RecordChecksum');
  const pos = await current.getAttribute('data-position');
  await p.locator(`#hex span[data-pos="${pos}"].dmg`).waitFor();
  // The problems grid: arrows move, Enter jumps into the hex view with the keyboard.
  await p.locator('#problems').focus();
  await p.keyboard.press('ArrowUp');
  assert.equal(await current.getAttribute('data-kind'), 'IndexEntryMismatch');
  await p.keyboard.press('ArrowDown');
  assert.equal(await current.getAttribute('data-kind'), 'RecordChecksum');
  assert.equal(await p.locator('#problems').getAttribute('aria-activedescendant'), await current.getAttribute('id'));
  await p.keyboard.press('Enter');
  await p.waitForFunction(() => document.activeElement?.id === 'hex');
  await p.keyboard.press('ArrowRight');
  assert.match(await p.locator('#hex-hover').textContent(), new RegExp(`^byte ${Number(pos) + 1}: `));
  assert.equal(await p.locator('#hex').getAttribute('aria-activedescendant'), `hex-b-${Number(pos) + 1}`);
  // The file map of this segment: its rot is drawn damaged; a click on the first verified run jumps there.
  const bad = p.locator('#file-map .run[data-class="damaged"]');
  assert.ok((await bad.count()) >= 1);
  const tallest = await p.locator('#file-map .run[data-class="verified"]').evaluateAll((runs) =>
    runs.reduce((a, b) => (b.getBoundingClientRect().height > a.getBoundingClientRect().height ? b : a)).id);
  const verified = p.locator(`#${tallest}`);
  await verified.click({ position: { x: 5, y: 1 } });
  const start = Number(await verified.getAttribute('data-start'));
  // The record table follows: the record holding the clicked byte is selected.
  await p.waitForFunction((start) => {
    const byte = Number(document.querySelector('#records .rec.selected span:nth-child(4)')?.textContent);
    return byte <= start + 100 && byte >= start - 100;
  }, start);
  const recordByte = Number(await p.locator('#records .rec.selected span').nth(3).textContent());
  await p.locator(`#hex span[data-pos="${recordByte}"].sel`).waitFor();
  // Keyboard on the map: step to a damaged run, Enter jumps there.
  await p.locator('#file-map').focus();
  await p.keyboard.press('ArrowDown');
  await p.keyboard.press('Enter');
  await p.locator('#file-map .run.cursor[data-class="damaged"]').waitFor();
  // Jump by record offset: the record's bytes are selected and its table row follows.
  await p.fill('#jump', '@55');
  await p.press('#jump', 'Enter');
  await p.locator('#records .rec.selected span:first-child', { hasText: /^55$/ }).waitFor();
  // Jump by byte position, then click a byte: its record is selected.
  await p.fill('#jump', '0x40');
  await p.press('#jump', 'Enter');
  await p.locator('#hex span[data-pos="64"].sel').waitFor();
  await p.locator('#hex span[data-pos="64"]').click();
  await p.locator('#records .rec.selected').waitFor();
  // A byte is a little shorter than its row (the next row's bytes reach up into it but for
  // its last pixel): a click on the row just under a byte is that byte's.
  const byte = await p.locator('#hex span[data-pos="97"]').boundingBox();
  const line = await p.locator('#hex span[data-pos="97"]').locator('xpath=..').boundingBox();
  assert.ok(byte.y + byte.height < line.y + line.height, `the byte (${JSON.stringify(byte)}) is shorter than its row (${JSON.stringify(line)})`);
  // Where that strip lies depends on the fraction of a pixel the page sits at, and a mouse
  // lands on whole pixels: the click is given to the row itself, under the byte's column.
  await p.locator('#hex span[data-pos="97"]').locator('xpath=..').evaluate((row, [x, y]) =>
    row.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: x, clientY: y })), [byte.x + byte.width / 2, line.y + line.height - 0.5]);
  await p.waitForFunction(() => document.querySelector('#hex').getAttribute('aria-activedescendant') === 'hex-b-97');
  // A click on an overview row selects that file, whatever order files finished in.
  await p.locator('#overview tbody tr', { hasText: '00000000000000000002.index' }).click();
  assert.match(await p.locator('.detail h2').textContent(), /00000000000000000002\.index — index$/);
  await p.screenshot({ path: join(ARTIFACTS, 'inspector-sample.png'), fullPage: true });
});

test('keyboard and screen reader: every control is reached by Tab, focus is visible, axe finds no violation', async () => {
  const p = await sampleOpened();
  await p.locator('#hex span.dmg').first().waitFor();
  await p.evaluate(() => document.activeElement?.blur());
  const reached = new Set();
  for (let i = 0; i < 60; i++) {
    await p.keyboard.press('Tab');
    const info = await p.evaluate(() => {
      const el = document.activeElement;
      const style = getComputedStyle(el);
      return { id: el.id || el.tagName.toLowerCase(), outline: style.outlineStyle !== 'none' || style.boxShadow !== 'none' };
    });
    reached.add(info.id);
    if (['problems', 'hex', 'file-map', 'sample'].includes(info.id)) assert.ok(info.outline, `focus is visible on #${info.id}`);
  }
  for (const id of ['file-input', 'folder-input', 'sample', 'summary', 'tr', 'severity-filter', 'kind-filter', 'problems', 'download-json', 'download-md', 'shared-by-input', 'permalink', 'jump', 'hex', 'file-map']) {
    assert.ok(reached.has(id), `Tab reaches ${id}: ${[...reached].join(', ')}`);
  }
  // An overview row opens with Enter.
  await p.locator('#overview tbody tr', { hasText: '00000000000000000000.log' }).focus();
  await p.keyboard.press('Enter');
  assert.match(await p.locator('.detail h2').textContent(), /00000000000000000000\.log — segment$/);
  assert.equal(await p.locator('#problems').getAttribute('role'), 'grid');
  assert.equal(await p.locator('#hex').getAttribute('role'), 'grid');
  assert.deepEqual(await axeViolations(p), []);
});

test('a whole shard folder is inspected with its cross-file checks', async () => {
  const p = await page();
  await p.goto(base);
  const dir = shard('acme_default_clicks_0');
  await drop(p, await folder(dir));
  const row = p.locator('#problems [role=row][data-kind="IndexEntryMismatch"]');
  await row.waitFor({ timeout: 15000 });
  const shardCells = await p.locator('#overview tbody tr td:first-child').allTextContents();
  assert.ok(shardCells.every((c) => c === basename(dir)), shardCells.join(','));
});

test('a CLI JSON report, dropped or pasted, shows its findings; dropped with its folder, every row is checked', async () => {
  const dir = shard('acme_default_clicks_0');
  const json = cliReport([dir]);
  const cli = JSON.parse(json);
  const reportFile = join(await scratch('report-'), 'felix-report.json');
  await writeFile(reportFile, json);
  const p = await page();
  await p.goto(base);
  await p.setInputFiles('#file-input', reportFile);
  await p.locator('#shared-banner').waitFor({ timeout: 15000 });
  assert.match(await p.locator('#shared-banner').textContent(), /opened from the file felix-report\.json/);
  assert.equal(await p.locator('#overview tbody tr').count(), cli.files.length);
  const kinds = await p.locator('#problems .gridbody [role=row]').evaluateAll((rows) => rows.map((r) => `${r.dataset.kind}@${r.dataset.position}`));
  assert.deepEqual(kinds, cli.files.flatMap((f) => f.findings.map((x) => `${x.kind}@${x.position}`)));
  await p.locator('#needs-files').waitFor();
  // The index view names the stale entry from the report alone.
  await p.locator('#overview tbody tr', { hasText: '00000000000000000000.index' }).click();
  await p.locator('#index-entries tr[data-kind="IndexEntryMismatch"]').waitFor();
  // The epochs view of a shared report draws the report's generations.
  const payments = JSON.parse(cliReport([shard('acme_default_payments_0')]));
  const epochs = payments.files.find((f) => f.kind === 'epochs');
  const e = await page();
  await e.goto(link({ report: payments }));
  await e.locator('#overview tbody tr', { hasText: 'epochs' }).click();
  const bars = await e.locator('#epochs-timeline .epoch').allTextContents();
  assert.ok(bars.length >= 1);
  assert.deepEqual(bars, epochs.entries.map(([g, o]) => `g${g} @ ${o}`));
  // Pasted, the same.
  const q = await page();
  await q.goto(base);
  await q.click('#open-report summary');
  await q.fill('#report-text', json);
  await q.click('#open-report-text');
  await q.locator('#problems [role=row][data-kind="IndexEntryMismatch"]').waitFor();
  // Report and folder in one drop: every file of the report matches.
  const r = await page();
  await r.goto(base);
  await drop(r, [{ path: 'felix-report.json', from: reportFile }, ...(await folder(dir))]);
  await r.locator('#check-status[data-state="checked"]').waitFor({ timeout: 15000 });
  const checks = await r.locator('#overview td.check').evaluateAll((cells) => cells.map((c) => c.dataset.check));
  assert.deepEqual(checks, cli.files.map(() => 'matches'));
  assert.deepEqual(await axeViolations(r), [], 'the shared banner and the checks are accessible too');
  // A report from before the `hash` field (SHA-256 only) is checked by SHA-256: the page computes it for that report.
  const old = JSON.parse(cliReport(['--sha256', dir]));
  for (const f of old.files) delete f.hash;
  assert.ok(old.files.every((f) => /^[0-9a-f]{64}$/.test(f.sha256)));
  const oldFile = join(await scratch('old-'), 'felix-report.json');
  await writeFile(oldFile, JSON.stringify(old, null, 2));
  const o = await page();
  await o.goto(base);
  await drop(o, [{ path: 'felix-report.json', from: oldFile }, ...(await folder(dir))]);
  await o.locator('#check-status[data-state="checked"]').waitFor({ timeout: 15000 });
  assert.deepEqual(await o.locator('#overview td.check').evaluateAll((cells) => cells.map((c) => c.dataset.check)), old.files.map(() => 'matches'));
  // One changed byte: that row differs by SHA-256.
  const changed = await scratch('old-changed-');
  const files = await folder(dir);
  for (const f of files) {
    const b = await readFile(f.from);
    if (f.path.endsWith('00000000000000000000.index')) b[b.length - 1] ^= 1;
    await writeFile(join(changed, basename(f.from)), b);
  }
  await o.goto(base);
  await drop(o, [{ path: 'felix-report.json', from: oldFile }, ...files.map((f) => ({ path: f.path, from: join(changed, basename(f.from)) }))]);
  await o.locator('#check-status[data-state="checked"]').waitFor({ timeout: 15000 });
  const reasons = await o.locator('#overview td.check[data-check="differs"] .reasons li').allTextContents();
  assert.match(reasons[0], /^hash differs \(sha256\): /);
});

test('with no Web Worker the page scans and then hashes on its own, and the report is still the CLI\'s byte for byte', async () => {
  const dir = shard('acme_default_payments_0');
  const p = await page();
  await p.addInitScript(() => { delete window.Worker; });
  await p.goto(base);
  await p.setInputFiles('#file-input', join(dir, '00000000000000000001.log'));
  await p.locator('#problems [role=row][data-kind="Truncated"]').waitFor({ timeout: 15000 });
  await p.locator('#hash-timing').waitFor({ timeout: 15000 });
  assert.equal(p.workers.length, 0, 'no worker ran');
  assert.equal(await download(p, '#download-json'), cliReport(['00000000000000000001.log'], dir));
});

// A 72 MiB segment of 4 KiB records (rot in offset 17, a torn tail) in a folder of its own.
async function largeSegment() {
  const dir = await scratch('large-');
  const header = segmentHeader();
  const payload = Buffer.alloc(4096 - 28, 0x61);
  const parts = [header];
  for (let o = 0; o < 18 * 1024; o++) {
    const h = recordHeader(o, o, payload);
    parts.push(h, o === 17 ? Buffer.from(payload).fill(0x62, 9, 10) : payload);
  }
  const bytes = Buffer.concat(parts);
  await writeFile(join(dir, '00000000000000000000.log'), bytes.subarray(0, bytes.length - 11));
  return dir;
}

test('a large segment on two cores: the verdict first, then the hash worker reads it again, and the report is still the CLI\'s byte for byte', async () => {
  // Over HASH_DEFER_MIN_BYTES (64 MiB): on fewer than 3 cores the hash waits for the verdict.
  const dir = await largeSegment();
  const p = await twoCorePage();
  await p.setInputFiles('#file-input', join(dir, '00000000000000000000.log'));
  await p.locator('#problems [role=row][data-kind="RecordChecksum"]').waitFor({ timeout: 60000 });
  await p.locator('#hash-timing').waitFor({ timeout: 60000 });
  const verified = Number(/all verified after (\d+)/.exec(await p.locator('#timing').textContent())[1]);
  const hashed = Number(/every file hashed after (\d+)/.exec(await p.locator('#hash-timing').textContent())[1]);
  assert.ok(hashed >= verified, `the hash (${hashed} ms) comes after the verdict (${verified} ms)`);
  assert.equal(await download(p, '#download-json'), cliReport(['00000000000000000000.log'], dir));
  assert.deepEqual([p.errors, p.panics], [[], []]);
});

// A 1 GiB segment of 700-byte payloads: about 1.47 million records, more than
// the record list keeps (MAX_RECORD_ROWS, 1,000,000). Written in pieces, never
// held whole. The last record's offset is returned.
async function gibSegment() {
  const dir = await scratch('gib-');
  const f = await open(join(dir, '00000000000000000000.log'), 'w');
  const header = segmentHeader();
  await f.write(header);
  const payload = Buffer.alloc(700, 0x61);
  const size = 28 + payload.length;
  const records = Math.floor(((1 << 30) - 32) / size);
  const batch = Buffer.alloc(size * 8192);
  for (let o = 0; o < records;) {
    let at = 0;
    for (; at < batch.length && o < records; o++, at += size) {
      recordHeaderInto(batch, at, o, o, payload);
      payload.copy(batch, at + 28);
    }
    await f.write(batch.subarray(0, at));
  }
  await f.close();
  return { dir, last: records - 1 };
}

test('a 1 GiB segment with more records than the list keeps: verified to its last offset, in bounded page memory', async () => {
  const { dir, last } = await gibSegment();
  try {
    const p = await twoCorePage();
    await p.waitForFunction(() => window.wasmBindings);
    let peakJs = 0, done = false;
    const sample = (async () => {
      while (!done) {
        peakJs = Math.max(peakJs, await p.evaluate(() => performance.memory.usedJSHeapSize));
        await new Promise((ok) => setTimeout(ok, 100));
      }
    })();
    await p.setInputFiles('#file-input', join(dir, '00000000000000000000.log'));
    await p.locator('#hash-timing').waitFor({ timeout: 300000 });
    done = true; await sample;
    const cells = await p.locator('#overview tbody td').allTextContents();
    assert.ok(cells.includes(String(last)), `the last offset ${last} is shown: ${cells}`);
    assert.equal(await p.locator('#records-heading').textContent(), `Records (${last + 1}: the first 1000000 held, the rest read from the file as you reach them)`);
    // Linear memory never shrinks: its size now is its peak. The list's cap
    // (1,000,000 rows of 29 bytes) is 28 MiB of it, held once (the rows stay
    // in the message they came in); the file is 1,024 MiB.
    const wasm = await p.evaluate(() => window.wasmBindings.wasm_memory_bytes());
    assert.ok(wasm <= 40 << 20, `page wasm memory ${(wasm / 1048576).toFixed(1)} MiB`);
    assert.ok(peakJs <= 96 << 20, `page JS heap peaked at ${(peakJs / 1048576).toFixed(1)} MiB`);
    console.log(`1 GiB: page wasm ${(wasm / 1048576).toFixed(1)} MiB, JS heap peak ${(peakJs / 1048576).toFixed(1)} MiB`);
    assert.deepEqual([p.errors, p.panics], [[], []]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// `records` records of 64 bytes (a 36-byte payload), offsets from 0: with
// 3 million, three times the rows the page holds in memory (MAX_RECORD_ROWS).
// Written in batches, never held whole; a few seconds.
async function smallRecordSegment(records) {
  const dir = await scratch('many-');
  const f = await open(join(dir, '00000000000000000000.log'), 'w');
  const header = segmentHeader();
  await f.write(header);
  const payload = Buffer.alloc(36, 0x62);
  const size = 28 + payload.length;
  const batch = Buffer.alloc(size * 65536);
  for (let o = 0; o < records;) {
    let at = 0;
    for (; at < batch.length && o < records; o++, at += size) {
      recordHeaderInto(batch, at, o, 1000 + o, payload);
      payload.copy(batch, at + 28);
    }
    await f.write(batch.subarray(0, at));
  }
  await f.close();
  return dir;
}

test('issue 18, every record: the last of 3 million records is found by offset, selected in the record table and named in the hex view; past it, "no such offset"', async () => {
  const records = 3_000_000;
  const last = records - 1;
  const dir = await smallRecordSegment(records);
  try {
    const p = await twoCorePage();
    // Where the hex view stands in the page, each frame from the moment it is shown until the file's hash is in
    // (on two cores a file this large is hashed once its verdict is shown): the hashes coming in move nothing either.
    await p.evaluate(() => {
      window.hexTops = [];
      const watch = () => {
        const hex = document.getElementById('hex');
        if (hex) {
          const top = hex.getBoundingClientRect().top + window.scrollY;
          if (window.hexTops.at(-1)?.top !== top) window.hexTops.push({ top, hashed: !!document.getElementById('hash-timing') });
        }
        if (!document.getElementById('hash-timing') || !hex) requestAnimationFrame(watch);
      };
      requestAnimationFrame(watch);
    });
    await p.setInputFiles('#file-input', join(dir, '00000000000000000000.log'));
    await p.locator('#records-heading', { hasText: `Records (${records}:` }).waitFor({ timeout: 120000 });
    const jump = async (to) => { await p.fill('#jump', to); await p.press('#jump', 'Enter'); };
    const hexTop = () => p.evaluate(() => document.getElementById('hex').getBoundingClientRect().top + window.scrollY);
    await p.locator('#hex').waitFor();
    await p.locator('#hash-timing').waitFor({ timeout: 120000 });
    const tops = await p.evaluate(() => window.hexTops);
    assert.equal(tops.length, 1, `the hex view did not move when the hash came in: ${JSON.stringify(tops)}`);
    const before = await hexTop();
    for (const offset of [last, 2_000_001, last]) {
      await jump(`@${offset}`);
      const pos = 32 + offset * 64;
      // The record table scrolls to the record (read from the file: it is past the rows held) and selects it.
      const selected = p.locator('#records .rec.selected');
      await selected.locator('span:first-child', { hasText: new RegExp(`^${offset}$`) }).waitFor({ timeout: 30000 });
      assert.equal(await selected.locator('span').nth(3).textContent(), String(pos));
      assert.ok(await selected.isVisible());
      // The hex view shows its bytes selected, and names them as the record's fields.
      const byte = p.locator(`#hex span[data-pos="${pos + 40}"]`);
      await byte.waitFor({ timeout: 30000 });
      assert.match(await byte.getAttribute('class'), /\bsel\b/);
      const named = new RegExp(`^byte ${pos + 40}: payload = 36 bytes \\(record ${offset}, bytes ${pos + 28}\\.\\.${pos + 64}\\)$`);
      // Nothing above the bytes moves once they are shown (the rows read from the file arriving, the selection's link button).
      assert.equal(await hexTop(), before, 'the hex view did not move');
      await p.waitForTimeout(1000);
      assert.equal(await hexTop(), before, 'the hex view did not move once the rows arrived');
      await byte.hover();
      await p.waitForFunction((re) => new RegExp(re).test(document.querySelector('#hex-hover').textContent), named.source, { timeout: 5000 });
    }
    assert.equal(await p.locator('.jump-error').count(), 0);
    // Past the last offset: the page says so and names the last one.
    await jump(`@${last + 1000}`);
    await p.locator('.jump-error').waitFor();
    assert.equal(await p.locator('.jump-error').textContent(), `no such offset ${last + 1000} in this file (its last is ${last})`);
    assert.deepEqual([p.errors, p.panics], [[], []]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('workers that fail as they start are dropped: the page scans on its own, and the report is still the CLI\'s byte for byte', async () => {
  const dir = shard('acme_default_payments_0');
  const p = await page();
  await p.route('**/felix-scan-worker_loader.js', (r) => r.fulfill({ contentType: 'text/javascript', body: 'throw new Error("no worker today");' }));
  await p.goto(base);
  await p.locator('#file-input').waitFor({ state: 'attached', timeout: 15000 });
  await p.waitForFunction(() => window.wasmBindings);
  await p.waitForTimeout(500); // the workers fail to start
  await p.setInputFiles('#file-input', join(dir, '00000000000000000001.log'));
  await p.locator('#problems [role=row][data-kind="Truncated"]').waitFor({ timeout: 15000 });
  await p.locator('#hash-timing').waitFor({ timeout: 15000 });
  assert.equal(await download(p, '#download-json'), cliReport(['00000000000000000001.log'], dir));
  assert.deepEqual(p.panics, []);
});

test('a drop while a large one is still being read: only the new drop\'s results and report, no stale error', async () => {
  const large = await largeSegment();
  const small = shard('acme_default_payments_0');
  const p = await twoCorePage();
  await p.setInputFiles('#file-input', join(large, '00000000000000000000.log'));
  await p.locator('#problems [role=row][data-kind="RecordChecksum"]').waitFor({ timeout: 60000 });
  // The large file's scan may still run and its hash is still to come: drop another file now.
  await p.setInputFiles('#file-input', join(small, '00000000000000000001.log'));
  await p.locator('#problems [role=row][data-kind="Truncated"]').waitFor({ timeout: 15000 });
  await p.locator('#hash-timing').waitFor({ timeout: 15000 });
  await p.waitForTimeout(1500); // anything the first job still had to say
  assert.equal(await p.locator('#error').count(), 0, 'no error from the stopped job');
  assert.equal(await p.locator('#problems [role=row][data-kind="RecordChecksum"]').count(), 0, 'the first file is gone');
  assert.equal(await download(p, '#download-json'), cliReport(['00000000000000000001.log'], small));
  assert.deepEqual([p.errors, p.panics], [[], []]);
});

test('hostile permalinks: a multi-byte hash is refused by name, markup shows as text, and the Markdown export is inert', async () => {
  const dir = shard('acme_default_payments_0');
  const report = JSON.parse(cliReport(['00000000000000000001.log'], dir));
  // A multi-byte hash (it once panicked on a byte slice): refused in words, naming the field.
  const bad = structuredClone(report);
  bad.files[0].sha256 = '€'.repeat(22);
  const p = await page();
  await p.goto(link({ report: bad }));
  await p.locator('#error').waitFor();
  assert.match(await p.locator('#error').textContent(), /files\[0\]\.sha256 is not 64 lower-case hex digits \(it holds 22 characters\)/);
  const badHash = structuredClone(report);
  badHash.files[0].hash.value = '€'.repeat(22);
  const h = await page();
  await h.goto(link({ report: badHash }));
  await h.locator('#error').waitFor();
  assert.match(await h.locator('#error').textContent(), /files\[0\]\.hash\.value is not 64 lower-case hex digits \(it holds 22 characters\)/);
  // HTML and Markdown in paths, messages and the sender's name: text on the page.
  const evil = structuredClone(report);
  const path = '`<img src=x onerror="window.__pwned=1">`|x\n# ALL FILES CLEAN\n![t](https://tracker.invalid/p.png)';
  evil.files[0].path = path;
  evil.files[0].findings[0].message = 'ok |\n| forged | row |\n# ALL FILES CLEAN [click](javascript:alert(1)) <script>window.__pwned=2</script> see www.evil.invalid and me@evil.invalid';
  const q = await page();
  await q.goto(link({ shared_by: '<img src=x onerror="window.__pwned=3">', made_at_micros: 1800000000000000, build: 'felix-inspector 0.1.0', report: evil }));
  await q.locator('#shared-banner').waitFor();
  // Shown as the CLI prints them: line breaks escaped (codec::report::one_line), markup as text.
  const oneLine = (s) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  assert.equal(await q.locator('#overview td.path bdi.field').first().textContent(), oneLine(path));
  assert.equal(await q.locator('#shared-by').textContent(), '<img src=x onerror="window.__pwned=3">');
  assert.equal(await q.locator('#problems .gridbody [role=row] .msg').textContent(), oneLine(evil.files[0].findings[0].message));
  assert.equal(await q.locator('img').count(), 0);
  assert.equal(await q.evaluate(() => window.__pwned), undefined);
  const md = await download(q, '#download-md');
  const seen = readMarkdown(md);
  assert.deepEqual(seen.active, [], seen.html);
  // The file's note (inspected alone) has its row under Notes, as it is beside the file on the page.
  assert.deepEqual(seen.headings, ['Felix storage report', 'Findings', 'Notes'], seen.html);
  assert.deepEqual(seen.tables, [1, 1, evil.files[0].notes.length], seen.html);
  await writeFile(join(ARTIFACTS, 'hostile-report.md'), md);
});

test('a link may carry 10,000 findings: the problems panel renders a dozen rows; one more is refused', async () => {
  const dir = shard('acme_default_payments_0');
  const report = JSON.parse(cliReport(['00000000000000000001.log'], dir));
  const f = report.files[0];
  f.size = 20000;
  f.findings = Array.from({ length: 10000 }, (_, i) => ({ ...f.findings[0], position: i, end: i + 1 }));
  const p = await page();
  await p.goto(link({ report }));
  await p.locator('#problems').waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#problems-heading').textContent(), 'Problems (10000)');
  assert.equal(await p.locator('#problems').getAttribute('aria-rowcount'), '10001');
  assert.ok((await p.locator('#problems .gridbody [role=row]').count()) <= 14, 'virtualised');
  await p.locator('#problems').focus();
  await p.keyboard.press('End');
  await p.locator('#problems .problem.current[data-position="9999"]').waitFor();
  f.findings.push({ ...f.findings[0], position: 10000, end: 10001 });
  const q = await page();
  await q.goto(link({ report }));
  await q.locator('#error').waitFor();
  assert.match(await q.locator('#error').textContent(), /hold 10001 findings in all; at most 10000 are accepted here/);
  // The issue's flood: a small fragment that inflates to 215,087 findings is refused before it is parsed.
  f.size = 1 << 20;
  f.findings = Array.from({ length: 215087 }, () => ({ ...f.findings[0], position: 1, end: 2 }));
  const flood = link({ report });
  assert.ok(flood.length < 256 * 1024, `${flood.length} characters`);
  const r = await page();
  await r.goto(base);
  await r.evaluate((hash) => { location.hash = hash; }, flood.slice(base.length));
  await r.locator('#error').waitFor();
  assert.match(await r.locator('#error').textContent(), /inflates past 4194304 bytes, more than a link may carry/);
  assert.equal(await r.locator('#problems').count(), 0);
});

test('file names from a dropped folder are text in every view and export', async () => {
  const dir = shard('acme_default_payments_0');
  const name = '<img src=x onerror="window.__pwned=1">`|# x.log';
  const p = await page();
  await p.goto(base);
  await drop(p, [{ path: name, from: join(dir, '00000000000000000001.log') }]);
  await p.locator('#overview tbody tr').first().waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#overview td.path bdi.field').first().textContent(), name);
  assert.equal(await p.locator('img').count(), 0);
  const md = readMarkdown(await download(p, '#download-md'));
  assert.deepEqual(md.active, [], md.html);
  assert.deepEqual(md.tables[0], 1);
  const json = JSON.parse(await download(p, '#download-json'));
  assert.equal(json.files[0].path, name);
  assert.equal(await p.evaluate(() => window.__pwned), undefined);
});

// Issue 10: the replica diff and the recovery preview, each against the CLI on the same bytes.

const SECRET = 'PAYLOAD-NEVER-SHARED';

// Replica B begins as a byte-for-byte copy of A's first 50 records; then each appends 10 different ones.
async function replicas() {
  const dir = await scratch('replicas-');
  const [a, b] = [join(dir, 'a'), join(dir, 'b')];
  const produce = (root, lines) => execFileSync(CLI, ['produce', root, '--shard', 'acme/default/orders/0', '--batch', '100'], { input: lines.join('\n') + '\n' });
  produce(a, Array.from({ length: 50 }, (_, i) => `${SECRET}-common-${i}`));
  const shardName = (await readdir(a))[0];
  await mkdir(join(b, shardName), { recursive: true });
  for (const f of await readdir(join(a, shardName))) await copyFile(join(a, shardName, f), join(b, shardName, f));
  produce(a, Array.from({ length: 10 }, (_, i) => `${SECRET}-a-${i}`));
  produce(b, Array.from({ length: 10 }, (_, i) => `${SECRET}-b-${i}`));
  return [join(a, shardName), join(b, shardName)];
}

test('the diff view on two dropped replica folders: first divergent offset 50, the CLI\'s diff, payload masked and never shared', async () => {
  const [a, b] = await replicas();
  const run = spawnSync(CLI, ['diff', a, b, '--json']);
  assert.equal(run.status, 1, run.stderr.toString());
  const cli = JSON.parse(run.stdout.toString());
  assert.equal(cli.first_divergent_offset, 50);
  const p = await page();
  await p.goto(base);
  await dropOn(p, '#replica-a', await folder(a));
  await dropOn(p, '#replica-b', await folder(b));
  await p.locator('#first-divergent').waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#first-divergent').textContent(), 'First divergent offset: 50');
  assert.notEqual(await p.locator('.checksum-a').textContent(), await p.locator('.checksum-b').textContent());
  // Payload bytes are masked on the page until the user unmasks them, and never in an export.
  assert.ok((await p.locator('.record-hex .masked').count()) > 0);
  assert.equal(await p.locator('.record-hex .payload').count(), 0);
  const json = await download(p, '#diff-json');
  const md = await download(p, '#diff-md');
  await p.click('#diff-link');
  const link = await p.locator('#diff-permalink').inputValue();
  const inflated = (await import('node:zlib')).inflateRawSync(Buffer.from(link.split('#d=')[1], 'base64url')).toString();
  for (const shared of [json, md, inflated]) assert.ok(!shared.includes(SECRET) && !shared.includes('PAYLOAD'), 'a payload left the page');
  // One judge: the page's JSON is the CLI's, but for the paths (as dropped vs as given).
  const mine = JSON.parse(json);
  mine.a.path = cli.a.path;
  mine.b.path = cli.b.path;
  assert.deepEqual(mine, cli);
  assert.ok(readMarkdown(md).active.length === 0);
  assert.deepEqual(await axeViolations(p), [], 'the diff view is accessible');
  await p.check('#unmask');
  assert.ok((await p.locator('.record-hex .payload').count()) > 0, 'unmasked locally, the payload bytes show');
  // The link opens elsewhere as a claim.
  const other = await page();
  await other.goto(link);
  await other.locator('#diff-claim').waitFor({ timeout: 15000 });
  assert.equal(await other.locator('#first-divergent').textContent(), 'First divergent offset: 50');
  assert.equal(await other.locator('.record-hex').count(), 0, 'a shared diff has no bytes to show');
});

test('crafted diff links are refused by name and their text stays text', async () => {
  const [a, b] = await replicas();
  const cli = JSON.parse(spawnSync(CLI, ['diff', a, b, '--json']).stdout.toString());
  const craft = (d) => `${base}#d=${deflateRawSync(Buffer.from(JSON.stringify(d))).toString('base64url')}`;
  const p = await page();
  await p.goto(craft({ ...cli, identical: true }));
  await p.locator('#diff-error').waitFor({ timeout: 15000 });
  assert.match(await p.locator('#diff-error').textContent(), /identical is true/);
  const q = await page();
  await q.goto(craft({ ...cli, a: { ...cli.a, path: '<img src=x onerror="window.__pwned=1">' }, notes: ['<script>window.__pwned=2</script>'] }));
  await q.locator('#diff-claim').waitFor({ timeout: 15000 });
  assert.equal(await q.locator('#side-a .path').textContent(), '<img src=x onerror="window.__pwned=1">');
  assert.equal(await q.locator('img').count(), 0);
  assert.equal(await q.evaluate(() => window.__pwned), undefined);
  const r = await page();
  await r.goto(`${base}#d=${'A'.repeat(300_000)}`);
  await r.locator('#diff-error').waitFor({ timeout: 15000 });
  assert.match(await r.locator('#diff-error').textContent(), /characters long/);
});

test('the recovery preview of the dropped demo shards is the CLI\'s plan', async () => {
  const root = join(sample, 'root');
  const shards = (await readdir(root)).sort();
  const files = (await Promise.all(shards.map((s) => folder(join(root, s))))).flat();
  const p = await page();
  await p.goto(base);
  await drop(p, files);
  const cli = JSON.parse(spawnSync(CLI, ['recover', root, '--dry-run', '--json']).stdout.toString());
  assert.equal(cli.shards.length, shards.length);
  for (const want of cli.shards) {
    const name = basename(want.path);
    const pre = p.locator(`section.recovery[data-shard="${name}"] pre.plan-json`);
    await pre.waitFor({ state: 'attached', timeout: 20000 });
    const mine = JSON.parse(await pre.textContent());
    assert.equal(mine.path, name);
    assert.deepEqual({ ...mine, path: want.path }, want, `the page's plan for ${name}`);
  }
  // A cut names its bytes and the flag-free command; its bytes open in the hex view.
  const payments = p.locator('section.recovery[data-shard^="acme_default_payments_0"]');
  assert.match(await payments.locator('[data-action=cut]').textContent(), /cut 00000000000000000001\.log at byte 1064 \(0x428\): 77 bytes move to 00000000000000000001\.log\.cut-1064/);
  assert.match(await payments.locator('code.command').textContent(), /^felix-storage recover '<root>\/acme_default_payments_0-[0-9a-f]+'$/);
  await payments.locator('button.show-cut').click();
  await p.locator('section.detail h2').waitFor({ timeout: 15000 });
  assert.match(await p.locator('section.detail h2').textContent(), /acme_default_payments_0-[0-9a-f]+\/00000000000000000001\.log/);
  const audit = p.locator('section.recovery[data-shard^="acme_default_audit_0"]');
  assert.match(await audit.locator('.verdict').textContent(), /refuses/);
  // Refused for rot no flag allows cutting: what would make it succeed, in the CLI's words, before the
  // command (which alone would only refuse again).
  const auditDir = join(root, shards.find((s) => s.startsWith('acme_default_audit_0')));
  const cliSaid = spawnSync(CLI, ['recover', auditDir, '--dry-run']);
  const advice = `${cliSaid.stdout}${cliSaid.stderr}`.split('\n').map((l) => l.slice(l.indexOf(': ') + 2)).find((l) => l.startsWith('recover refuses until'));
  assert.match(advice, /^recover refuses until 00000000000000000000\.log \(the damaged record at offset 24\) is replaced: copy that file from a healthy replica/);
  assert.equal(await audit.locator('.to-succeed').textContent(), `To make recovery succeed: ${advice}`);
  assert.match(await audit.locator('p', { has: p.locator('code.command') }).textContent(), /^Then, on the broker: felix-storage recover '<root>\/acme_default_audit_0-[0-9a-f]+'/);
  assert.equal(await payments.locator('.to-succeed').count(), 0, 'a shard recover repairs gets the command alone');
  // A shard with nothing to do gets no command to run.
  const orders = p.locator('section.recovery[data-shard^="acme_default_orders_0"]');
  assert.equal(await orders.locator('.verdict').textContent(), 'nothing to do');
  assert.deepEqual([await orders.locator('code.command').count(), await orders.locator('.no-command').count()], [0, 0]);
  assert.deepEqual(await axeViolations(p), [], 'the recovery previews are accessible');
});

test('a cut whose evidence name is taken is planned under the name the run writes, on the page as by the CLI', async () => {
  const payments = shard('acme_default_payments_0');
  const parent = await scratch('taken-');
  const dir = join(parent, basename(payments));
  await mkdir(dir);
  for (const f of await readdir(payments)) await copyFile(join(payments, f), join(dir, f));
  // Evidence an earlier recovery kept at the same byte: never replaced, so the next cut's bytes go to -2.
  await writeFile(join(dir, '00000000000000000001.log.cut-1064'), 'older evidence');
  const p = await page();
  await p.goto(base);
  await drop(p, await folder(dir));
  const cli = JSON.parse(spawnSync(CLI, ['recover', dir, '--dry-run', '--json']).stdout.toString());
  const want = cli.shards[0];
  assert.equal(want.actions.find((a) => a.action === 'cut').evidence, '00000000000000000001.log.cut-1064-2');
  const section = p.locator(`section.recovery[data-shard="${basename(dir)}"]`);
  const pre = section.locator('pre.plan-json');
  await pre.waitFor({ state: 'attached', timeout: 20000 });
  assert.deepEqual({ ...JSON.parse(await pre.textContent()), path: want.path }, want, "the page's plan is the CLI's");
  assert.match(await section.locator('[data-action=cut]').textContent(), /77 bytes move to 00000000000000000001\.log\.cut-1064-2/);
  const ran = JSON.parse(spawnSync(CLI, ['recover', dir, '--json']).stdout.toString());
  assert.equal(ran.shards[0].actions.find((a) => a.action === 'cut').evidence, '00000000000000000001.log.cut-1064-2', 'the run writes the name the page showed');
  assert.equal(await readFile(join(dir, '00000000000000000001.log.cut-1064'), 'utf8'), 'older evidence');
});

test('issue 19: the replica compare and the recovery preview read their folders in a worker of their own, not on the page; with no worker, on the page, in the same words', async () => {
  const [a, b] = await replicas();
  const root = join(sample, 'root');
  const shards = (await readdir(root)).sort();
  const files = (await Promise.all(shards.map((s) => folder(join(root, s))))).flat();
  // Every Blob.slice on the page itself (a worker has globals of its own): how many, and of how many files.
  const watch = () => {
    const seen = new WeakSet();
    window.__slices = { calls: 0, files: 0 };
    const slice = Blob.prototype.slice;
    Blob.prototype.slice = function (...args) {
      window.__slices.calls++;
      if (!seen.has(this)) { seen.add(this); window.__slices.files++; }
      return slice.apply(this, args);
    };
  };
  const shown = [];
  for (const workers of [true, false]) {
    const p = await page();
    await p.addInitScript(watch);
    if (!workers) await p.addInitScript(() => { delete window.Worker; });
    await p.goto(base);
    await dropOn(p, '#replica-a', await folder(a));
    await dropOn(p, '#replica-b', await folder(b));
    await p.locator('#first-divergent').waitFor({ timeout: 15000 });
    await p.locator('#side-by-side').waitFor({ timeout: 15000 });
    const compared = await p.evaluate(() => ({ ...window.__slices }));
    if (workers) assert.deepEqual(compared, { calls: 0, files: 0 }, 'the page read no byte of either replica');
    else assert.ok(compared.calls > 0, 'with no worker the page reads both replicas itself');
    const diff = await p.locator('#replica-diff').innerHTML();
    await drop(p, files);
    for (const s of shards) await p.locator(`section.recovery[data-shard="${s}"]`).waitFor({ state: 'attached', timeout: 20000 });
    const previewed = await p.evaluate(() => ({ ...window.__slices }));
    // On the page: at most the file the views show (the hex view reads its rows); never every file of every shard.
    if (workers) assert.ok(previewed.files <= 1, `the page read ${previewed.files} of the ${files.length} files`);
    else assert.ok(previewed.files >= files.length, `with no worker the page reads every file: ${previewed.files}`);
    if (!workers) assert.equal(p.workers.length, 0, 'no worker ran');
    shown.push([diff, await p.locator('#recovery-preview').innerHTML()]);
  }
  assert.equal(shown[0][0], shown[1][0], 'the same compare with and without a worker');
  assert.equal(shown[0][1], shown[1][1], 'the same previews with and without a worker');
});

// Issue 18, "What it shows wrong": items 1-5, each through the path a user takes.

// Every file of the demo root, as a drop of the root folder delivers it (`root/shard/file`).
async function rootFiles() {
  const root = join(sample, 'root');
  const shards = (await readdir(root)).sort();
  return (await Promise.all(shards.map(async (s) => (await folder(join(root, s))).map((f) => ({ ...f, path: `root/${f.path}` }))))).flat();
}

test('issue 18.1: a root\'s permalink checked with only the payments folder (or that folder renamed) pairs no other shard\'s rows', async () => {
  const p = await page();
  await p.goto(base);
  const all = await rootFiles();
  await drop(p, all);
  await p.locator('#hash-timing').waitFor({ timeout: 30000 });
  await p.click('#permalink');
  const url = await p.locator('#permalink-url').inputValue();
  const dir = shard('acme_default_payments_0');
  const payments = await folder(dir);
  const fresh = await page();
  await fresh.goto(url);
  await fresh.locator('#shared-banner').waitFor({ timeout: 15000 });
  await drop(fresh, payments);
  await fresh.locator('#check-status[data-state="checked"]').waitFor({ timeout: 15000 });
  const [k, n] = [payments.length, all.length];
  assert.equal(await fresh.locator('#check-status').textContent(), `Checked against the dropped files: ${k} match, 0 differ, ${n - k} have no dropped file.`);
  const rows = await fresh.locator('#overview tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.querySelector('td:first-child').textContent, tr.querySelector('td.check').dataset.check]));
  for (const [shardName, check] of rows) assert.equal(check, shardName === basename(dir) ? 'matches' : 'no file', `${shardName}: ${check}`);
  // The same folder under another name is not the claimed shard: nothing pairs, and its files are listed as not in the report.
  const renamed = payments.map((f) => ({ ...f, path: f.path.replace(basename(dir), 'payments copy') }));
  await drop(fresh, renamed);
  await fresh.locator('#check-status[data-state="checked"]').waitFor({ timeout: 15000 });
  assert.equal(await fresh.locator('#check-status').textContent(), `Checked against the dropped files: 0 match, 0 differ, ${n} have no dropped file.`);
  const unpaired = await fresh.locator('#unpaired').textContent();
  assert.ok(renamed.every((f) => unpaired.includes(f.path)), unpaired);
});

// A segment of `count` records with 16-byte payloads; every record `rot(o)` holds has a flipped payload byte.
async function rottedSegment(count, rot) {
  const dir = await scratch('rotted-');
  const header = segmentHeader();
  const parts = [header];
  const at = [];
  let pos = 32;
  for (let o = 0; o < count; o++) {
    const payload = Buffer.alloc(16, 0x61);
    const h = recordHeader(o, o, payload);
    if (rot(o)) payload[3] ^= 1;
    parts.push(h, payload);
    at.push(pos);
    pos += 44;
  }
  await writeFile(join(dir, '00000000000000000000.log'), Buffer.concat(parts));
  return { dir, at };
}

test('issue 18.2: damage past the 10,000 listed findings is counted on the page and in the Markdown, and still marked in the hex view and the file map', async () => {
  const { dir, at } = await rottedSegment(60000, (o) => o % 2 === 1);
  const cli = JSON.parse(cliReport(['00000000000000000000.log'], dir));
  assert.deepEqual([cli.files[0].findings.length, cli.files[0].findings_omitted], [10000, 20000]);
  const p = await page();
  await p.goto(base);
  await p.setInputFiles('#file-input', join(dir, '00000000000000000000.log'));
  await p.locator('#problems-unlisted').waitFor({ timeout: 30000 });
  assert.equal(await p.locator('#problems-heading').textContent(), 'Problems (10000 listed, 20000 more not listed)');
  assert.equal(await p.locator('#problems-unlisted li').getAttribute('data-unlisted'), '20000');
  // The last record rotted (offset 59999) is far past the 20,000 records the listed findings cover.
  const last = at[59999] + 30;
  const good = at[59998] + 30;
  for (const [pos, damaged] of [[last, true], [good, false]]) {
    await p.fill('#jump', `0x${pos.toString(16)}`);
    await p.press('#jump', 'Enter');
    const byte = p.locator(`#hex span[data-pos="${pos}"]`);
    await byte.waitFor({ timeout: 15000 });
    assert.equal(/\bdmg\b/.test(await byte.getAttribute('class')), damaged, `byte ${pos}`);
    await byte.hover();
    const hover = await p.locator('#hex-hover').textContent();
    assert.equal(/damaged: its payload checksum failed \(one of the findings not listed\)/.test(hover), damaged, hover);
  }
  // The file map: the cells past the listed findings are damaged too (every cell holds a rotted record).
  const classes = await p.locator('#file-map .run').evaluateAll((runs) => runs.map((r) => r.dataset.class));
  assert.deepEqual([...new Set(classes)], ['damaged'], classes.join(','));
  await p.locator('#hash-timing').waitFor({ timeout: 30000 });
  assert.equal(await download(p, '#download-json'), cliReport(['00000000000000000000.log'], dir));
  const md = await download(p, '#download-md');
  assert.match(md, /`00000000000000000000\.log`\\: 20000 more findings not listed/);
  await rm(dir, { recursive: true, force: true });
});

// A PNG's first bytes.
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89]);

test('issue 18.3: every note the CLI prints is beside its file, and a file that is not a Felix file is never called clean', async () => {
  const parent = await scratch('notes-');
  const dir = join(parent, 'odd');
  await mkdir(dir);
  const torn = await readFile(join(shard('acme_default_payments_0'), '00000000000000000001.log'));
  const files = {
    '00000000000000000000.log': PNG,
    '00000000000000000001 (1).log': torn,
    '00000000000000000002.log': Buffer.alloc(0),
    'junk.bin': Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 197 + 13) & 0xff)),
    'picture.png': PNG,
    'server.log': Buffer.from('2026-12-01 started\n'),
    'writer.lock': Buffer.alloc(0),
  };
  for (const [name, bytes] of Object.entries(files)) await writeFile(join(dir, name), bytes);
  const check = async (p, cli) => {
    await p.locator('#overview tbody tr').nth(cli.files.length - 1).waitFor({ timeout: 15000 });
    const rows = await p.locator('#overview tbody tr').evaluateAll((trs) => trs.map((tr) => ({
      // The path whole: its shard's folders (not drawn: the shard column shows them) and the name.
      path: [...tr.querySelectorAll('td.path > .in-shard > bdi.field, td.path > bdi.field')].map((b) => b.textContent).join(''),
      notes: [...tr.querySelectorAll('td.path .notes li')].map((li) => li.textContent),
      badge: tr.querySelector('.badge').textContent,
      kind: tr.children[2].textContent,
    })));
    assert.equal(rows.length, cli.files.length);
    for (const f of cli.files) {
      const row = rows.find((r) => r.path === f.path);
      assert.ok(row, `${f.path} is on the page`);
      assert.deepEqual(row.notes, f.notes.map((n) => `note: ${n}`), f.path);
      assert.ok(f.kind !== 'unknown' || row.badge === 'not judged', `${f.path}: ${row.badge}`);
      if (f.kind === 'unknown') assert.ok(f.notes.length > 0, `${f.path} says what it is`);
    }
    return rows;
  };
  // As a folder (one shard: the cross-file notes), then each file alone.
  const p = await page();
  await p.goto(base);
  await drop(p, await folder(dir));
  const rows = await check(p, JSON.parse(cliReport(['odd'], parent)));
  assert.ok(rows.some((r) => r.notes.some((n) => /^note: no index file/.test(n))), JSON.stringify(rows));
  const q = await page();
  await q.goto(base);
  const names = Object.keys(files).sort();
  await q.setInputFiles('#file-input', names.map((n) => join(dir, n)));
  const alone = await check(q, JSON.parse(cliReport(names, dir)));
  assert.ok(alone.some((r) => r.notes.some((n) => /^note: inspected alone/.test(n))), JSON.stringify(alone));
  assert.ok(alone.every((r) => r.kind !== 'unknown' || r.badge !== 'clean'));
  await rm(parent, { recursive: true, force: true });
});

test('issue 18.4: bidirectional controls in a name or a sender are shown as the CLI shows them, on the page and in the Markdown', async () => {
  const dir = shard('acme_default_payments_0');
  const report = JSON.parse(cliReport(['00000000000000000001.log'], dir));
  const p = await page();
  await p.goto(link({ shared_by: 'alice\u202eevil\u202c bob', report }));
  await p.locator('#shared-banner').waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#shared-by').textContent(), 'alice\\u{202e}evil\\u{202c} bob');
  assert.equal(await p.locator('#shared-by bdi').count(), 1, 'isolated from the words around it');
  // A folder whose name holds U+202E: the CLI's escaped path is the page's, in the heading, the problem sentence and the Markdown.
  const parent = await scratch('bidi-');
  const name = 'x\u202etxt.log';
  await mkdir(join(parent, name));
  await copyFile(join(dir, '00000000000000000001.log'), join(parent, name, '00000000000000000001.log'));
  const text = spawnSync(CLI, ['inspect', name], { cwd: parent }).stdout.toString();
  const escaped = 'x\\u{202e}txt.log/00000000000000000001.log';
  assert.ok(text.includes(`${escaped}: Truncated at byte 1064`), text);
  const q = await page();
  await q.goto(base);
  await drop(q, await folder(join(parent, name)));
  await q.locator('#problems [role=row][data-kind="Truncated"]').waitFor({ timeout: 15000 });
  const heading = await q.locator('section.detail h2').textContent();
  const sentence = await q.locator('#problem-detail').textContent();
  for (const shown of [heading, sentence]) {
    assert.ok(shown.startsWith(escaped) && !/[\u202a-\u202e\u2066-\u2069]/.test(shown), shown);
  }
  assert.ok(sentence.startsWith(`${escaped}: Truncated at byte 1064 (0x428), repair always: `), sentence);
  const preview = q.locator('section.recovery h3');
  await preview.waitFor({ timeout: 15000 });
  assert.equal(await preview.textContent(), 'Recovery preview: x\\u{202e}txt.log');
  const md = await download(q, '#download-md');
  assert.ok(!/[\u202a-\u202e\u2066-\u2069\ufffd]/.test(md), md);
  const html = readMarkdown(md).html;
  assert.ok(html.includes(`<code>${escaped}</code>`), html);
  await rm(parent, { recursive: true, force: true });
});

test('issue 18.4: a name an error banner quotes is escaped by the one rule and isolated', async () => {
  // A report file named with U+202E that is not JSON: the banner names it as the CLI would print it.
  const p = await page();
  await p.goto(base);
  await drop(p, [{ path: 'r\u202enosj.json', bytes: Buffer.from('{"report_version":1,') }]);
  await p.locator('#error').waitFor({ timeout: 15000 });
  const banner = await p.locator('#error').textContent();
  assert.ok(banner.startsWith('r\\u{202e}nosj.json is cut short: its JSON ends at line 1, column 20'), banner);
  assert.ok(!/[\u202a-\u202e\u2066-\u2069]/.test(banner), banner);
  assert.deepEqual(await p.locator('#error bdi.field').allTextContents(), ['r\\u{202e}nosj.json'], 'the name is isolated from the words around it');
  // Two reports at once: each name (U+2066, a newline) escaped and isolated, the banner one line.
  const q = await page();
  await q.goto(base);
  await drop(q, [{ path: 'a\u2066.json', bytes: Buffer.from('{}') }, { path: 'b\nc.json', bytes: Buffer.from('{}') }]);
  await q.locator('#error').waitFor({ timeout: 15000 });
  assert.equal(await q.locator('#error').textContent(), 'drop one report at a time, not a\\u{2066}.json, b\\nc.json');
  assert.deepEqual(await q.locator('#error bdi.field').allTextContents(), ['a\\u{2066}.json', 'b\\nc.json']);
});

test('issue 18.4: a report file opened by name is named in the shared banner and the Markdown by the one rule, isolated', async () => {
  const dir = shard('acme_default_payments_0');
  const p = await page();
  await p.goto(base);
  await drop(p, [{ path: 'r\u202enosj.json', bytes: Buffer.from(cliReport(['00000000000000000001.log'], dir)) }]);
  await p.locator('#shared-banner').waitFor({ timeout: 15000 });
  const said = p.locator('#shared-banner p').first();
  assert.ok((await said.textContent()).includes('opened from the file r\\u{202e}nosj.json. What follows'), await said.textContent());
  assert.deepEqual(await said.locator('bdi.field').allTextContents(), ['r\\u{202e}nosj.json'], 'isolated from the words around it');
  const md = await download(p, '#download-md');
  assert.ok(!/[\u202a-\u202e\u2066-\u2069\ufffd]/.test(md), md);
  assert.ok(readMarkdown(md).html.includes('opened from the file r\\u{202e}nosj.json: shared by'), md);
});

test('issue 18.4: the recovery preview prints a command only for a name a shell can be given as shown', async () => {
  const dir = shard('acme_default_payments_0');
  const parent = await scratch('cmd-');
  for (const name of ['x\u202etxt.log', 'line\nbreak', "it's payments"]) {
    await mkdir(join(parent, name));
    await copyFile(join(dir, '00000000000000000001.log'), join(parent, name, '00000000000000000001.log'));
  }
  const p = await page();
  await p.goto(base);
  await drop(p, [...await folder(join(parent, 'x\u202etxt.log')), ...await folder(join(parent, 'line\nbreak')), ...await folder(join(parent, "it's payments"))]);
  for (const [name, shown] of [['x\u202etxt.log', 'x\\u{202e}txt.log'], ['line\nbreak', 'line\\nbreak']]) {
    const section = p.locator('section.recovery').filter({ has: p.locator('h3', { hasText: shown }) });
    await section.locator('.verdict').waitFor({ timeout: 20000 });
    assert.equal(await section.locator('code.command').count(), 0, `no command to paste for ${shown}`);
    const words = await section.locator('.no-command').textContent();
    assert.ok(words.includes(`on the folder ${shown}. No command is printed`), words);
    assert.ok(!words.includes(name) && !/[\u202a-\u202e\u2066-\u2069\n]/.test(words), words);
    assert.deepEqual(await section.locator('.no-command bdi.field').allTextContents(), [shown]);
  }
  // A quote is typed safely: the command is the CLI's quoting, and a shell reads the path back.
  const quoted = p.locator('section.recovery').filter({ has: p.locator('h3', { hasText: "it's payments" }) });
  await quoted.locator('.verdict').waitFor({ timeout: 20000 });
  const command = await quoted.locator('code.command').textContent();
  assert.equal(command, "felix-storage recover '<root>/it'\\''s payments'");
  const word = command.slice('felix-storage recover '.length);
  assert.equal(spawnSync('sh', ['-c', `printf %s ${word}`]).stdout.toString(), "<root>/it's payments");
  await rm(parent, { recursive: true, force: true });
});

test('issue 18.4: every note beside a file is in the Markdown, as the page shows it', async () => {
  const dir = shard('acme_default_payments_0');
  const report = JSON.parse(cliReport(['00000000000000000001.log'], dir));
  report.files[0].notes = ['evil\u202egol.x\nsecond line \u2066q', 'plain words'];
  const p = await page();
  await p.goto(link({ report }));
  await p.locator('#shared-banner').waitFor({ timeout: 15000 });
  const onPage = (await p.locator('#overview li.note').allTextContents()).map((t) => t.replace(/^note: /, ''));
  assert.deepEqual(onPage, ['evil\\u{202e}gol.x\\nsecond line \\u{2066}q', 'plain words']);
  const md = await download(p, '#download-md');
  assert.ok(!/[\u202a-\u202e\u2066-\u2069\ufffd]/.test(md), md);
  const { html } = readMarkdown(md);
  const notes = html.slice(html.indexOf('<h2>Notes</h2>'));
  assert.ok(html.includes('<h2>Notes</h2>'), html);
  const cells = [...notes.matchAll(/<tr>\s*<td>(.*?)<\/td>\s*<td>(.*?)<\/td>\s*<\/tr>/g)].map((m) => [m[1], m[2]]);
  assert.deepEqual(cells, onPage.map((n) => [`<code>${report.files[0].path}</code>`, n]), notes);
});

test('issue 18.4: a replica folder\'s name and a diff link\'s record file are shown by the one rule', async () => {
  const [a, b] = await replicas();
  // A replica folder named with U+202E: its drop target names it escaped and isolated.
  const hostile = join(dirname(dirname(a)), 'r\u202eA');
  await mkdir(hostile);
  for (const f of await readdir(a)) await copyFile(join(a, f), join(hostile, f));
  const p = await page();
  await p.goto(base);
  await dropOn(p, '#replica-a', await folder(hostile));
  await dropOn(p, '#replica-b', await folder(b));
  await p.locator('#first-divergent').waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#replica-a .replica-name').textContent(), 'r\\u{202e}A');
  assert.equal(await p.locator('#replica-a .replica-name bdi.field').count(), 1);
  // A diff link whose divergent record names a file with U+202E and a newline: the record card shows the escape.
  const cli = JSON.parse(spawnSync(CLI, ['diff', a, b, '--json']).stdout.toString());
  cli.divergence.a.file = 'evil\u202egol.x\nline';
  const q = await page();
  await q.goto(`${base}#d=${deflateRawSync(Buffer.from(JSON.stringify(cli))).toString('base64url')}`);
  await q.locator('#diff-claim').waitFor({ timeout: 15000 });
  const card = q.locator('.record-card').first().locator('dd').first();
  assert.equal(await card.textContent(), 'evil\\u{202e}gol.x\\nline');
  assert.equal(await card.locator('bdi.field').count(), 1);
});

test('issue 18.5: files picked in any order, or a folder picked, give the CLI\'s report byte for byte', async () => {
  const dir = shard('acme_default_payments_0');
  const names = (await readdir(dir)).sort();
  const p = await page();
  await p.goto(base);
  await p.setInputFiles('#file-input', [...names].reverse().map((n) => join(dir, n)));
  await p.locator('#hash-timing').waitFor({ timeout: 15000 });
  assert.equal(await download(p, '#download-json'), cliReport(names, dir));
  const q = await page();
  await q.goto(base);
  await q.setInputFiles('#folder-input', dir);
  await q.locator('#hash-timing').waitFor({ timeout: 15000 });
  assert.equal(await download(q, '#download-json'), cliReport([basename(dir)], dirname(dir)));
});

test('issue 18, the verdict first: one sentence per shard, the CLI\'s own, above everything, with the most severe problem selected', async () => {
  const root = join(sample, 'root');
  const text = spawnSync(CLI, ['inspect', 'root'], { cwd: sample }).stdout.toString();
  const cli = text.split('\n').map((l) => l.match(/^(.*): verdict: (.*)$/)).filter(Boolean).map((m) => `${m[1]}: ${m[2]}`);
  assert.equal(cli.length, (await readdir(root)).length, text);
  const p = await page();
  await p.goto(base);
  await drop(p, await rootFiles());
  await p.locator('#verdicts li').nth(cli.length - 1).waitFor({ timeout: 20000 });
  await p.locator('#timing').waitFor({ timeout: 20000 });
  // Each verdict's line, and (issue 20) the shard's span of time beside it, in the CLI's words.
  const verdictLines = await p.locator('#verdicts li').evaluateAll((lis) => lis.map((li) => [...li.childNodes].filter((n) => !n.classList?.contains('shard-time')).map((n) => n.textContent).join('')));
  assert.deepEqual(verdictLines, cli);
  const cliTimes = text.split('\n').map((l) => l.match(/^.*: (time: .*)$/)).filter(Boolean).map((m) => m[1]);
  assert.deepEqual(await p.locator('#verdicts li .shard-time').allTextContents(), cliTimes);
  const payments = cli.find((l) => l.startsWith('root/acme_default_payments_0'));
  assert.match(payments, /a torn tail .*that `recover` would fix$/);
  // The command it quotes is shown as code, its backticks kept in the text but not drawn.
  const code = p.locator('#verdicts li', { hasText: 'acme_default_payments_0' }).locator('.sentence code');
  assert.deepEqual([await code.textContent(), await code.innerText()], ['`recover`', 'recover']);
  // A time in the verdict is never broken at its hyphens (at 390 px it read "2026-" / "11-01T09…").
  await p.setViewportSize({ width: 390, height: 844 });
  const stamps = await p.locator('#verdicts .shard-time .nowrap').evaluateAll((ss) => ss.map((s) => [s.textContent, s.getClientRects().length]));
  assert.ok(stamps.length >= 2 && stamps.every(([t, lines]) => /^\d{4}-\d\d-\d\dT/.test(t) && lines === 1), JSON.stringify(stamps));
  assert.equal(await p.evaluate(() => document.querySelector('main').firstElementChild.id), 'verdicts', 'above everything');
  const worst = await p.locator('#problems .gridbody [role=row] .sev').allTextContents();
  assert.ok(worst.includes('error'));
  assert.equal(await p.locator('#problems .problem.current .sev').textContent(), 'error', 'the most severe problem is selected on open');
});

// Issue 18, "Every screen and every hand".

// Every state a person meets, each on a page of `viewport`: the landing page; the sample open with its
// most severe problem selected, and its recovery plan opened as JSON; Enter on a problem (the hex view focused, the record table scrolled);
// an index file and the epochs file shown; two replicas compared with their divergence shown; a shared
// report, unchecked and then checked against its files; an error banner. `visit(state, page)` runs in each.
async function everyState(viewport, visit) {
  const p = await page(viewport);
  await p.goto(base);
  await p.locator('#sample').waitFor({ timeout: 15000 });
  await visit('the landing page', p);
  await p.click('#sample');
  await p.locator('#hex span.dmg').first().waitFor({ timeout: 15000 });
  await p.locator('#records .rec.selected').waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#problems .problem.current .sev').textContent(), 'error');
  await visit('the sample open, its most severe problem selected', p);
  const plan = p.locator('section.recovery details').first();
  await plan.locator('summary').click();
  await plan.locator('pre.plan-json').waitFor();
  await visit('the recovery plan opened as JSON', p);
  await plan.locator('summary').click();
  await p.locator('#problems').focus();
  await p.keyboard.press('ArrowDown');
  await p.keyboard.press('Enter');
  await p.waitForFunction(() => document.activeElement?.id === 'hex');
  await p.waitForFunction(() => document.querySelector('#records .rec.selected span')?.textContent === '104');
  await p.waitForFunction(() => document.querySelector('#records').closest('[role=grid]').scrollTop > 0);
  await visit('Enter on a problem: the hex view focused, the record table scrolled', p);
  await p.locator('#overview tbody tr', { hasText: '00000000000000000000.index' }).click();
  await p.locator('#index-entries tr.bad').waitFor({ timeout: 15000 });
  await visit('an index file', p);
  await p.locator('#overview tbody tr', { hasText: '/epochs' }).click();
  await p.locator('#epochs-timeline .epoch').first().waitFor({ timeout: 15000 });
  await visit('the epochs file', p);
  const [a, b] = await replicas();
  await dropOn(p, '#replica-a', await folder(a));
  await dropOn(p, '#replica-b', await folder(b));
  await p.locator('#side-by-side').waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#first-divergent').textContent(), 'First divergent offset: 50');
  await visit('two replicas compared, their divergence shown', p);
  const dir = shard('acme_default_payments_0');
  const q = await page(viewport);
  await q.goto(link({ report: JSON.parse(cliReport([dir])) }));
  await q.locator('#shared-banner').waitFor({ timeout: 15000 });
  await visit('a shared report, not checked', q);
  await drop(q, await folder(dir));
  await q.locator('#check-status[data-state="checked"]').waitFor({ timeout: 15000 });
  await visit('a shared report checked against its files', q);
  const r = await page(viewport);
  await r.goto(`${base}#s=AAAA`);
  await r.locator('#error').waitFor({ timeout: 15000 });
  await visit('an error banner', r);
}

test('issue 18, every screen: from 320 px up no state of the page scrolls sideways; wide tables and grids scroll in their own named box', async () => {
  for (const width of [320, 390]) {
    await everyState({ width, height: 844 }, async (state, p) => {
      const { scroll, inner } = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth }));
      assert.ok(scroll <= inner, `${state} at ${width} px: the page is ${scroll} px wide`);
      if (!state.startsWith('the sample open')) return;
      // The overview scrolls inside its own box, a region named by its heading.
      const box = await p.locator('#overview').evaluate((t) => {
        const b = t.closest('.tablebox');
        return { role: b.getAttribute('role'), name: document.getElementById(b.getAttribute('aria-labelledby'))?.textContent, wider: b.scrollWidth > b.clientWidth };
      });
      assert.deepEqual(box, { role: 'region', name: 'Overview', wider: true }, `at ${width} px`);
      // The problems and the records: each grid scrolls sideways in itself, and it is focusable.
      for (const grid of ['#problems', '[aria-labelledby="records-heading"]']) {
        const g = await p.locator(grid).evaluate((g) => ({ wider: g.scrollWidth > g.clientWidth, tabindex: g.getAttribute('tabindex') }));
        assert.deepEqual(g, { wider: true, tabindex: '0' }, `${grid} at ${width} px`);
      }
      const next = await p.locator('#next-problem').boundingBox();
      assert.ok(next.x + next.width <= width, `"next" is on screen at ${width} px`);
      // The replica drop zones keep their words on a line.
      const name = await p.locator('#replica-a .replica-name').boundingBox();
      assert.ok(name.height < 45, `the replica drop zone's words, ${name.height} px high at ${width} px`);
      if (width === 390) {
        await p.setViewportSize({ width: 390, height: 844 });
        await p.screenshot({ path: join(ARTIFACTS, 'inspector-sample-390x844.png'), fullPage: true });
      }
    });
  }
});

test('issue 18, every state: axe finds no violation, wide and at 390 px', async () => {
  const seen = [];
  const check = async (state, p) => {
    seen.push(state);
    assert.deepEqual(await axeViolations(p), [], state);
  };
  await everyState({ width: 1400, height: 900 }, async (state, p) => {
    if (state.startsWith('the sample open')) await p.screenshot({ path: join(ARTIFACTS, 'inspector-sample-1400x900.png'), fullPage: true });
    await check(state, p);
  });
  assert.equal(seen.length, 10);
  await everyState({ width: 390, height: 844 }, async (state, p) => check(`${state}, at 390 px`, p));
});

// `n` segments in one folder, each a copy of `from`, dropped at once.
async function dropCopies(p, folderName, from, n) {
  const bytes = [...await readFile(from)];
  await p.locator('#dropzone').waitFor({ state: 'attached', timeout: 15000 });
  await p.evaluate(({ bytes, folderName, n }) => {
    const dt = new DataTransfer();
    const one = new Uint8Array(bytes);
    const made = Array.from({ length: n }, (_, i) => new File([one], `${String(i * 1000).padStart(20, '0')}.log`));
    made.forEach((f) => dt.items.add(f));
    const items = made.map((f) => ({ webkitGetAsEntry: () => ({ isDirectory: false, fullPath: `/${folderName}/${f.name}`, file: (ok) => ok(f) }) }));
    const ev = new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt });
    Object.defineProperty(ev.dataTransfer, 'items', { value: Object.assign(items, { length: items.length }) });
    document.querySelector('#dropzone').dispatchEvent(ev);
  }, { bytes, folderName, n });
}

test('issue 18, every hand: the overview of a 300-file folder is one Tab stop; arrows, Page Up/Down, Home and End move in it, Enter selects', async (t) => {
  const p = await page();
  await p.goto(base);
  await dropCopies(p, 'many', join(shard('acme_default_orders_0'), '00000000000000000000.log'), 300);
  await p.locator('#overview tbody tr').nth(299).waitFor({ timeout: 30000 });
  await p.locator('#problems').waitFor({ timeout: 30000 });
  // The 300 rows scroll in a box of their own, in blocks the browser lays out only in view
  // (content-visibility): the first block is rendered, the last is skipped until it is reached.
  const layout = await p.evaluate(() => {
    const blocks = [...document.querySelectorAll('#overview .ov-block')];
    const drawn = (block) => block.querySelector('tr').checkVisibility({ contentVisibilityAuto: true });
    const box = document.querySelector('.overview .tablebox').getBoundingClientRect().height;
    return { blocks: blocks.length, first: drawn(blocks[0]), last: drawn(blocks.at(-1)), boxed: box <= window.innerHeight * 0.7 + 1 };
  });
  assert.deepEqual(layout, { blocks: 38, first: true, last: false, boxed: true });
  await p.evaluate(() => document.activeElement?.blur());
  const where = () => p.evaluate(() => {
    const el = document.activeElement;
    const row = el?.closest('#overview tbody tr');
    return { row: row ? Number(row.dataset.row) : null, stops: document.querySelectorAll('#overview tbody tr[tabindex="0"]').length };
  });
  // Tab into the overview, then once more: out of it.
  let presses = 0;
  while ((await where()).row === null && presses < 40) {
    await p.keyboard.press('Tab');
    presses++;
  }
  const entered = await where();
  assert.notEqual(entered.row, null, `Tab reaches the overview (${presses} presses)`);
  assert.equal(entered.stops, 1, 'one row holds the Tab stop');
  await p.keyboard.press('Tab');
  assert.equal((await where()).row, null, 'one more Tab leaves the overview');
  assert.ok(presses + 1 <= 12, `${presses + 1} presses to get past 300 files`);
  t.diagnostic(`Tab presses from the top of the page to past the overview of 300 files: ${presses + 1}`);
  // Back in, the keys move the focus row by row, by page, to either end.
  await p.keyboard.press('Shift+Tab');
  assert.equal((await where()).row, entered.row, 'Shift+Tab comes back to the same row');
  for (const [key, row] of [['Home', 0], ['ArrowDown', 1], ['PageDown', 11], ['End', 299], ['PageUp', 289], ['ArrowUp', 288], ['ArrowLeft', 288]]) {
    await p.keyboard.press(key);
    assert.deepEqual(await where(), { row, stops: 1 }, key);
  }
  // Enter selects the file the focus is on.
  await p.keyboard.press('Enter');
  await p.waitForFunction(() => document.querySelector('#overview tbody tr[aria-current="true"]')?.dataset.row === '288');
  assert.match(await p.locator('.detail h2').textContent(), /^many\/00000000000000288000\.log — segment$/);
  // The Tab stop stays where the keyboard left it.
  await p.keyboard.press('Tab');
  await p.keyboard.press('Shift+Tab');
  assert.deepEqual(await where(), { row: 288, stops: 1 });
  // Other files: the Tab stop is on the file selected for them.
  await p.click('#sample');
  await p.waitForFunction(() => document.querySelectorAll('#overview tbody tr').length === 7);
  await p.locator('#overview tbody tr[aria-current="true"]').waitFor();
  const stop = () => p.evaluate(() => [...document.querySelectorAll('#overview tbody tr')].filter((r) => r.tabIndex === 0).map((r) => Number(r.dataset.row)));
  const selected = await p.locator('#overview tbody tr[aria-current="true"]').evaluate((r) => Number(r.dataset.row));
  await p.waitForFunction((want) => [...document.querySelectorAll('#overview tbody tr')].filter((r) => r.tabIndex === 0).map((r) => Number(r.dataset.row)).join() === String(want), selected)
    .catch(() => {});
  assert.deepEqual(await stop(), [selected]);
});

// A segment of `records` records from offset `base`, each a 36-byte payload of `fill`; `cut`: bytes torn off its end.
function segmentBytes(records, { base = 0, fill = 0x62, cut = 0 } = {}) {
  const payload = Buffer.alloc(36, fill);
  const size = 28 + payload.length;
  const out = Buffer.alloc(32 + size * records);
  segmentHeader(base).copy(out);
  for (let o = 0; o < records; o++) {
    recordHeaderInto(out, 32 + o * size, base + o, 1000 + base + o, payload);
    payload.copy(out, 32 + o * size + 28);
  }
  return out.subarray(0, out.length - cut);
}

// Files dropped as one folder, `{ name, bytes }` each.
async function dropBytes(p, folderName, files) {
  await p.locator('#dropzone').waitFor({ state: 'attached', timeout: 15000 });
  await p.evaluate(({ files, folderName }) => {
    const dt = new DataTransfer();
    const made = files.map(({ name, bytes }) => new File([new Uint8Array(bytes)], name));
    made.forEach((f) => dt.items.add(f));
    const items = made.map((f) => ({ webkitGetAsEntry: () => ({ isDirectory: false, fullPath: `/${folderName}/${f.name}`, file: (ok) => ok(f) }) }));
    const ev = new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt });
    Object.defineProperty(ev.dataTransfer, 'items', { value: Object.assign(items, { length: items.length }) });
    document.querySelector('#dropzone').dispatchEvent(ev);
  }, { files: files.map(({ name, bytes }) => ({ name, bytes: [...bytes] })), folderName });
}

// Where an overview row is: the focused one (`'focus'`) or the selected one: its index, whether the browser
// drew it (not a block content-visibility skipped) and whether all of it shows in the overview's box, below
// its sticky header. Waits a moment for the box to settle (blocks drawn as they come into view).
async function overviewRowShown(p, which) {
  const probe = (which) => {
    const row = which === 'focus' ? document.activeElement?.closest('#overview tr[data-row]') : document.querySelector('#overview tr[aria-current="true"]');
    if (!row) return null;
    const box = document.querySelector('.overview .tablebox');
    const b = box.getBoundingClientRect();
    const head = document.querySelector('#overview .ov-head').getBoundingClientRect();
    const r = row.getBoundingClientRect();
    const bottom = b.top + box.clientTop + box.clientHeight;
    const shown = { row: Number(row.dataset.row), drawn: row.checkVisibility({ contentVisibilityAuto: true }), inView: r.top >= head.bottom - 1 && r.bottom <= bottom + 1 };
    // The keyboard's row is on screen too.
    return which === 'focus' ? { ...shown, onScreen: r.top >= -1 && r.bottom <= innerHeight + 1 } : shown;
  };
  await p.waitForFunction((which) => {
    const row = which === 'focus' ? document.activeElement?.closest('#overview tr[data-row]') : document.querySelector('#overview tr[aria-current="true"]');
    if (!row) return false;
    const box = document.querySelector('.overview .tablebox');
    const head = document.querySelector('#overview .ov-head').getBoundingClientRect();
    const r = row.getBoundingClientRect();
    const b = box.getBoundingClientRect();
    return row.checkVisibility({ contentVisibilityAuto: true }) && r.top >= head.bottom - 1 && r.bottom <= b.top + box.clientTop + box.clientHeight + 1
      && (which !== 'focus' || (r.top >= -1 && r.bottom <= innerHeight + 1));
  }, which, { timeout: 3000 }).catch(() => {});
  return p.evaluate(probe, which);
}

test('issue 18, every hand: in a 300-file overview the row the keys move to is drawn and in view, never under the sticky header', async () => {
  const p = await page({ width: 1300, height: 900 });
  await p.goto(base);
  await dropCopies(p, 'many', join(shard('acme_default_orders_0'), '00000000000000000000.log'), 300);
  await p.locator('#overview tbody tr').nth(299).waitFor({ timeout: 30000 });
  await p.locator('#problems').waitFor({ timeout: 30000 });
  await p.locator('#overview tr[data-row="0"]').focus();
  for (const [key, row] of [['End', 299], ['Home', 0], ['PageDown', 10], ['PageDown', 20], ['End', 299], ['PageUp', 289], ['PageUp', 279], ['ArrowUp', 278], ['Home', 0]]) {
    await p.keyboard.press(key);
    assert.deepEqual(await overviewRowShown(p, 'focus'), { row, drawn: true, inView: true, onScreen: true }, `${key} to row ${row}`);
  }
  // The row holding the Tab stop, scrolled under the header while the focus was away, shows whole once Shift+Tab comes back to it.
  for (let i = 0; i < 41; i++) await p.keyboard.press('ArrowDown');
  await p.keyboard.press('Tab');
  await p.locator('.overview .tablebox').evaluate((box) => {
    const row = box.querySelector('tr[data-row="41"]');
    box.scrollTop += row.getBoundingClientRect().top - box.querySelector('.ov-head').getBoundingClientRect().top;
  });
  await p.keyboard.press('Shift+Tab');
  assert.deepEqual(await overviewRowShown(p, 'focus'), { row: 41, drawn: true, inView: true, onScreen: true }, 'Shift+Tab back to row 41');
});

test('issue 18, every hand: a row focused while a 300-file overview fills in keeps the focus and its file — the rows added below never rewrite it', async () => {
  const p = await page({ width: 1300, height: 900 });
  // The moment the overview's third row is drawn, the keyboard is on it.
  await p.addInitScript(() => {
    new MutationObserver((_, watch) => {
      const row = document.querySelector('#overview tr[data-row="2"]');
      if (!row) return;
      row.focus();
      window.focusedOn = { rows: document.querySelectorAll('#overview tr[data-row]').length, file: row.querySelector('td.path bdi').textContent };
      watch.disconnect();
    }).observe(document, { childList: true, subtree: true });
  });
  await p.goto(base);
  await dropCopies(p, 'many', join(shard('acme_default_orders_0'), '00000000000000000000.log'), 300);
  await p.locator('#overview tbody tr').nth(299).waitFor({ timeout: 30000 });
  const { rows, file } = await p.evaluate(() => window.focusedOn);
  assert.ok(rows < 300, `focused with ${rows} rows drawn`);
  const now = () => p.evaluate(() => ({ row: document.activeElement.dataset.row, file: document.activeElement.querySelector('td.path bdi')?.textContent }));
  assert.deepEqual(await now(), { row: '2', file }, 'the focus is still on the file it was put on');
  await p.keyboard.press('ArrowDown');
  assert.equal((await now()).row, '3');
});

test('issue 18, every hand: the selected file\'s row is scrolled into the overview\'s box — on open, by n, by Find, in a shared report', async () => {
  // One shard of 300 segments of 10 records, each continuing the one before; the one at row 250 torn, the one at row 280 the only one holding "qqqq".
  const files = Array.from({ length: 300 }, (_, i) => ({
    name: `${String(i * 10).padStart(20, '0')}.log`,
    bytes: segmentBytes(10, { base: i * 10, cut: i === 250 ? 30 : 0, fill: i === 280 ? 0x71 : 0x62 }),
  }));
  const p = await page({ width: 1300, height: 900 });
  await p.goto(base);
  await dropBytes(p, 'many', files);
  await p.locator('#overview tbody tr').nth(299).waitFor({ timeout: 30000 });
  await p.locator('#hash-timing').waitFor({ timeout: 60000 });
  // On open the most severe problem is selected: its file, row 250, is in view.
  assert.deepEqual(await overviewRowShown(p, 'selected'), { row: 250, drawn: true, inView: true }, 'on open');
  // Ctrl held for another shortcut (Ctrl+C, a copy) is not the browser's find: the selected row is still held.
  await p.locator('#sample').focus();
  await p.keyboard.press('Control+c');
  await p.keyboard.press('Meta+a');
  await p.locator('.overview .tablebox').evaluate((box) => { box.scrollTop = 0; });
  await p.selectOption('#severity-filter', { index: 1 });
  await p.waitForTimeout(400);
  assert.deepEqual(await overviewRowShown(p, 'selected'), { row: 250, drawn: true, inView: true }, 'after Ctrl+C the selected row is still held');
  await p.selectOption('#severity-filter', { index: 0 });
  // The browser's own find (Ctrl+F) scrolls the box to a match elsewhere: the rows drawn again after
  // (here by a change of the problems' filter) no longer pull the box back to the selected row.
  await p.locator('#sample').focus();
  await p.keyboard.press('Control+f');
  await p.locator('.overview .tablebox').evaluate((box) => { box.scrollTop = 0; });
  await p.selectOption('#severity-filter', { index: 1 });
  await p.waitForTimeout(400);
  assert.equal(await p.locator('.overview .tablebox').evaluate((box) => box.scrollTop), 0, 'after Ctrl+F the box stays where find left it');
  await p.selectOption('#severity-filter', { index: 0 });
  // Back at the top, row 0 clicked; n steps to the problem in row 250.
  await p.locator('.overview .tablebox').evaluate((box) => { box.scrollTop = 0; });
  await p.locator('#overview tr[data-row="0"]').click();
  await p.locator('#sample').focus();
  await p.keyboard.press('n');
  assert.deepEqual(await overviewRowShown(p, 'selected'), { row: 250, drawn: true, inView: true }, 'n');
  // Find: the one file whose payloads hold "qqqq" is selected and its row shown.
  await p.locator('.overview .tablebox').evaluate((box) => { box.scrollTop = 0; });
  await p.fill('#find-query', 'qqqq');
  await p.press('#find-query', 'Enter');
  await p.locator('#find-results li.match').first().waitFor({ timeout: 15000 });
  await p.click('#find-next');
  await p.waitForFunction(() => /00000000000000002800\.log/.test(document.querySelector('section.detail h2')?.textContent ?? ''), null, { timeout: 15000 });
  // Find is below the bytes: the reader scrolls back up to the overview (the box was not scrolled since).
  await p.locator('#overview-heading').scrollIntoViewIfNeeded();
  assert.deepEqual(await overviewRowShown(p, 'selected'), { row: 280, drawn: true, inView: true }, 'a Find match');
  // The window made smaller (the box shorter, a scroll bar along its foot): the row is still held in view.
  await p.setViewportSize({ width: 900, height: 600 });
  assert.deepEqual(await overviewRowShown(p, 'selected'), { row: 280, drawn: true, inView: true }, 'the window made smaller');
  await p.setViewportSize({ width: 1300, height: 900 });
  // The same folder's report, opened from a link in a fresh page: its most severe problem's row is in view.
  const report = JSON.parse(await download(p, '#download-json'));
  assert.equal(report.files.length, 300);
  const q = await page({ width: 1300, height: 900 });
  await q.goto(link({ report }));
  await q.locator('#shared-banner').waitFor({ timeout: 15000 });
  await q.locator('#overview tr[aria-current="true"]').waitFor({ timeout: 15000 });
  assert.deepEqual(await overviewRowShown(q, 'selected'), { row: 250, drawn: true, inView: true }, 'a shared report');
  // The page itself did not scroll to it.
  assert.equal(await q.evaluate(() => window.scrollY), 0);
});

// Each word of the overview's cells and headers that is split across lines (a name may break anywhere:
// the shard and file columns are left out), as `column: word`.
function brokenWords() {
  const out = [];
  const cells = [...document.querySelectorAll('#overview th, #overview td')].filter((c) => !c.matches('.shard, .path'));
  for (const cell of cells) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) out.push(`${cell.cellIndex}: ${m[0]}`);
      }
    }
  }
  return out;
}

test('issue 18, every screen: the overview never breaks a number, a time or a word across lines — large offsets and sizes, the check column, a long name, at 320 px', async () => {
  const dir = shard('acme_default_payments_0');
  const report = JSON.parse(cliReport([dir]));
  // A segment of a billion records past offset two billion: numbers as wide as a busy broker's.
  const big = report.files.find((f) => f.kind === 'segment');
  Object.assign(big, { size: 28000000032, records: 1000000000, base_offset: 2000000000, first_offset: 2000000000, last_offset: 2999999999 });
  // Its hash and its last time not the file's: checked, it differs, the reasons quoting both times.
  big.hash.value = '0'.repeat(64);
  Object.assign(big.time, { last: big.time.max + 1, max: big.time.max + 1 });
  // And a report whose first file has a name of 300 letters and a note (a name breaks anywhere; nothing spills).
  const named = structuredClone(report);
  named.files[0].path = `${'x'.repeat(300)}/${named.files[0].path}`;
  const spilled = () => [...document.querySelectorAll('#overview td, #overview th')].filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => `${c.cellIndex}: ${c.textContent.slice(0, 30)}`);
  const pageWidth = () => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth });
  for (const width of [1300, 390, 320]) {
    const p = await page({ width, height: 900 });
    await p.goto(link({ report }));
    await p.locator('#shared-banner').waitFor({ timeout: 15000 });
    await p.locator(`#overview tbody tr >> nth=${report.files.length - 1}`).waitFor({ timeout: 15000 });
    assert.deepEqual(await p.evaluate(brokenWords), [], `a shared report at ${width} px`);
    // Checked against its files (the large segment differs, its reasons listed in the check column).
    await drop(p, await folder(dir));
    await p.locator('#check-status[data-state="checked"]').waitFor({ timeout: 15000 });
    await p.locator('#overview td.check[data-check="differs"]').first().waitFor();
    assert.deepEqual(await p.evaluate(brokenWords), [], `checked, at ${width} px`);
    assert.deepEqual(await p.evaluate(spilled), [], `checked, at ${width} px`);
    const { scroll, inner } = await p.evaluate(pageWidth);
    assert.ok(scroll <= inner, `the page is ${scroll} px wide at ${width} px`);
    const q = await page({ width, height: 900 });
    await q.goto(link({ report: named }));
    await q.locator(`#overview tbody tr >> nth=${report.files.length - 1}`).waitFor({ timeout: 15000 });
    assert.deepEqual(await q.evaluate(brokenWords), [], `a long name at ${width} px`);
    assert.deepEqual(await q.evaluate(spilled), [], `a long name at ${width} px`);
    const w = await q.evaluate(pageWidth);
    assert.ok(w.scroll <= w.inner, `with a long name the page is ${w.scroll} px wide at ${width} px`);
    if (width === 1300) await p.screenshot({ path: join(ARTIFACTS, 'overview-large-numbers.png') });
  }
});

test('issue 18, screen reader: the overview rows the accessibility tree holds say where they are, though the browser leaves out those it skipped', async (t) => {
  const p = await page({ width: 1300, height: 900 });
  await p.goto(base);
  await dropCopies(p, 'many', join(shard('acme_default_orders_0'), '00000000000000000000.log'), 300);
  await p.locator('#overview tbody tr').nth(299).waitFor({ timeout: 30000 });
  await p.locator('#hash-timing').waitFor({ timeout: 30000 });
  // The reader scrolls the box to its end.
  await p.locator('.overview .tablebox').hover();
  await p.mouse.wheel(0, 100000);
  await p.waitForFunction(() => { const b = document.querySelector('.overview .tablebox'); return b.scrollTop + b.clientHeight >= b.scrollHeight - 1; });
  await p.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
  const cdp = await p.context().newCDPSession(p);
  const { nodes } = await cdp.send('Accessibility.getFullAXTree');
  const held = [];
  for (const n of nodes.filter((n) => !n.ignored && n.role?.value === 'row' && n.backendDOMNodeId)) {
    const { object } = await cdp.send('DOM.resolveNode', { backendNodeId: n.backendDOMNodeId });
    const { result } = await cdp.send('Runtime.callFunctionOn', {
      objectId: object.objectId, returnByValue: true,
      functionDeclaration: 'function () { return this.closest("#overview") ? [this.dataset.row === undefined ? 0 : Number(this.dataset.row) + 1, this.getAttribute("aria-rowindex")] : null; }',
    });
    if (result.value) held.push(result.value);
  }
  t.diagnostic(`${held.length} of 301 rows in the accessibility tree`);
  assert.ok(held.some(([at]) => at === 0) && held.some(([at]) => at === 300), `the header and the last row are held: ${held.map(([at]) => at)}`);
  // Row k of the table (the header is row 1) says aria-rowindex k, whatever rows are left out before it.
  assert.deepEqual(held.filter(([at, index]) => index !== String(at + 1)), []);
});

test('issue 18, every hand: the focused overview row\'s ring is drawn whole — at a block\'s first and last rows too', async () => {
  const p = await sampleOpened('#overview tbody tr >> nth=6');
  await p.locator('#hash-timing').waitFor({ timeout: 15000 });
  // The file column draws the file's name; its shard's folder is the shard column's (kept in the text and the title).
  const cell = p.locator('#overview tr[data-row="3"] td.path');
  assert.match(await cell.textContent(), /^acme_default_orders_0-[0-9a-f]+\/00000000000000000001\.log$/);
  assert.equal(await cell.innerText(), '00000000000000000001.log');
  assert.equal(await cell.getAttribute('title'), await cell.textContent());
  await p.locator('#overview tr[data-row="3"]').focus();
  // The sample's 7 rows are one block: rows 0 and 6 are its edges.
  for (const [key, row] of [['Home', 0], ['ArrowDown', 1], ['End', 6]]) {
    await p.keyboard.press(key);
    const tr = p.locator(`#overview tr[data-row="${row}"]`);
    assert.ok(await tr.evaluate((r) => r === document.activeElement && r.matches(':focus-visible')), `row ${row} focused`);
    const box = await tr.boundingBox();
    const pad = 5;
    const shot = await p.screenshot({ clip: { x: box.x - pad, y: box.y - pad, width: box.width + 2 * pad, height: box.height + 2 * pad } });
    // Along each side, the share of its length where the ring's colour (--offset) is painted within 5 px of the edge.
    const sides = await p.evaluate(async ({ b64, pad }) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = new OffscreenCanvas(img.width, img.height);
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, img.width, img.height).data;
      const ring = (x, y) => { const i = (y * img.width + x) * 4; return Math.abs(d[i] - 9) < 40 && Math.abs(d[i + 1] - 105) < 40 && Math.abs(d[i + 2] - 218) < 40; };
      const near = (along, across) => across.some((a) => along(a));
      const band = (edge) => Array.from({ length: 2 * pad }, (_, k) => edge - pad + k).filter((v) => v >= 0);
      const [w, h] = [img.width, img.height];
      const share = (n, hit) => { let k = 0; for (let i = 0; i < n; i++) if (hit(i)) k++; return Math.round((100 * k) / n); };
      const xs = w - 4 * pad, ys = h - 4 * pad;
      return {
        top: share(xs, (i) => near((y) => ring(2 * pad + i, y), band(pad))) >= 90,
        bottom: share(xs, (i) => near((y) => y < h && ring(2 * pad + i, y), band(h - pad))) >= 90,
        left: share(ys, (i) => near((x) => ring(x, 2 * pad + i), band(pad))) >= 90,
        right: share(ys, (i) => near((x) => x < w && ring(x, 2 * pad + i), band(w - pad))) >= 90,
      };
    }, { b64: shot.toString('base64'), pad });
    assert.deepEqual(sides, { top: true, bottom: true, left: true, right: true }, `the ring around row ${row}`);
  }
});

test('issue 18, print: a 300-file overview prints every row, not the scroll box\'s view of them', async () => {
  const p = await page({ width: 1300, height: 900 });
  await p.goto(base);
  await dropCopies(p, 'many', join(shard('acme_default_orders_0'), '00000000000000000000.log'), 300);
  await p.locator('#overview tbody tr').nth(299).waitFor({ timeout: 30000 });
  await p.emulateMedia({ media: 'print' });
  const printed = await p.evaluate(() => {
    const box = document.querySelector('.overview .tablebox');
    const last = document.querySelector('#overview tr[data-row="299"]');
    return { cut: Math.max(0, box.scrollHeight - box.clientHeight), lastDrawn: last.checkVisibility({ contentVisibilityAuto: true }) };
  });
  assert.deepEqual(printed, { cut: 0, lastDrawn: true });
  // A portrait page (A4's printable width at 96 dpi): every column on the paper, none cut at its edge.
  await p.setViewportSize({ width: 718, height: 1000 });
  const wide = await p.evaluate(() => {
    const box = document.querySelector('.overview .tablebox');
    const head = document.querySelector('#overview .ov-head th:last-child').getBoundingClientRect();
    return { over: Math.max(0, box.scrollWidth - box.clientWidth), hashInside: head.right <= box.getBoundingClientRect().right + 1 };
  });
  assert.deepEqual(wide, { over: 0, hashInside: true });
  await p.setViewportSize({ width: 1300, height: 900 });
  await p.emulateMedia({ media: 'screen' });
  assert.ok(await p.evaluate(() => { const b = document.querySelector('.overview .tablebox'); return b.scrollHeight > b.clientHeight; }), 'on screen it scrolls in its box');
});

test('issue 18, print: on a portrait page the problems, the records and the hex view fit the paper, none cut at its edge', async () => {
  const p = await sampleOpened('.recgrid');
  await p.emulateMedia({ media: 'print' });
  // A4's printable width at 96 dpi.
  await p.setViewportSize({ width: 718, height: 1000 });
  const over = await p.evaluate(() => {
    const cut = (sel) => {
      const box = document.querySelector(sel);
      const last = box.querySelector('[role="columnheader"]:last-of-type, .head > :last-child');
      const inside = !last || last.getBoundingClientRect().right <= box.getBoundingClientRect().right + 1;
      return { over: Math.max(0, box.scrollWidth - box.clientWidth), inside };
    };
    return { problems: cut('#problems'), records: cut('.recgrid'), hex: cut('#hex'), page: Math.max(0, document.documentElement.scrollWidth - innerWidth) };
  });
  const fits = { over: 0, inside: true };
  assert.deepEqual(over, { problems: fits, records: fits, hex: fits, page: 0 });
  await p.emulateMedia({ media: 'screen' });
});

test('issue 18 (links): a link cut short, an empty #s= or JSON of another shape is refused in words, naming the field — never the parser\'s text', async () => {
  const dir = shard('acme_default_payments_0');
  const report = JSON.parse(cliReport(['00000000000000000001.log'], dir));
  const parserWords = /invalid type|expected (u32|u64|struct)|Envelope|deflate|Failed|CannotMakeProgress|at line \d+ column/;
  const said = async (url) => {
    const p = await page();
    await p.goto(url);
    await p.locator('#error').waitFor({ timeout: 15000 });
    const text = await p.locator('#error').textContent();
    assert.doesNotMatch(text, parserWords, text);
    return text;
  };
  // An empty #s= (it once said "deflate: FailedCannotMakeProgress").
  assert.equal(await said(`${base}#s=`), 'this link\'s report is empty: nothing follows the link\'s prefix (was the whole link copied?)');
  // A link that lost its end when copied.
  const whole = link({ report });
  assert.match(await said(whole.slice(0, whole.length - 40)), /^this link's report is cut short: its compressed data ends too early/);
  // A value of the wrong type (it once said "invalid type: sequence, expected u32 at line 1 column 1"): the field by its path.
  const wrong = structuredClone(report);
  wrong.files[0].size = [1];
  assert.equal(await said(link({ report: wrong })),
    'this link\'s report is not a report: field `report.files[0].size` should be a whole number from 0 to 18446744073709551615, not a list');
  // Not an envelope at all (it once said "expected struct Envelope").
  const list = `${base}#s=${deflateRawSync(Buffer.from('[1,2]')).toString('base64url')}`;
  assert.equal(await said(list), 'this link\'s report is not a report: it holds a list where a report\'s JSON object should be');
  // Pasted text says where, in words.
  const p = await page();
  await p.goto(base);
  await p.click('#open-report summary');
  await p.fill('#report-text', '{"report_version": 1, "files": [');
  await p.click('#open-report-text');
  await p.locator('#error').waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#error').textContent(), 'the pasted text is cut short: its JSON ends at line 1, column 32, before it is complete');
});

test('issue 18 (links): a link listing one file twice is refused by name; an old #d= error goes when a valid #s= link replaces it, an old #s= error when a #d= link does', async () => {
  const dir = shard('acme_default_payments_0');
  const report = JSON.parse(cliReport(['00000000000000000001.log'], dir));
  const twice = { ...report, files: [report.files[0], report.files[0]] };
  const p = await page();
  await p.goto(link({ report: twice }));
  await p.locator('#error').waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#error').textContent(),
    'this link\'s report: the report is refused: files[1].path lists 00000000000000000001.log again (first as files[0]): a report lists each file once');
  assert.deepEqual(await p.locator('#error bdi.field').allTextContents(), ['00000000000000000001.log']);
  // A broken diff link, then a valid report link in the same page (hashchange): the diff's error goes.
  const q = await page();
  await q.goto(`${base}#d=AAAA`);
  await q.locator('#diff-error').waitFor({ timeout: 15000 });
  assert.match(await q.locator('#diff-error').textContent(), /^this diff link is cut short/);
  await q.evaluate((h) => { location.hash = h; }, new URL(link({ report })).hash);
  await q.locator('#shared-banner').waitFor({ timeout: 15000 });
  await q.locator('#diff-error').waitFor({ state: 'detached', timeout: 15000 });
  assert.equal(await q.locator('#error').count(), 0);
  // And the other way: a refused report link, then a diff link in the same page: the report link's error goes.
  const r = await page();
  await r.goto(link({ report: twice }));
  await r.locator('#error').waitFor({ timeout: 15000 });
  await r.evaluate(() => { location.hash = '#d=AAAA'; });
  await r.locator('#diff-error').waitFor({ timeout: 15000 });
  await r.locator('#error').waitFor({ state: 'detached', timeout: 15000 });
});

test('issue 18 (links): a permalink URL pasted whole opens like the link; the page\'s diff JSON and the CLI\'s reopen on the page', async () => {
  const paste = async (p, text) => {
    await p.click('#open-report summary');
    await p.fill('#report-text', text);
    await p.click('#open-report-text');
  };
  // The sample's permalink, pasted with the spaces and line breaks of a ticket around it.
  const s = await page();
  await s.goto(base);
  await s.click('#sample');
  await s.locator('#hash-timing').waitFor({ timeout: 15000 });
  await s.click('#permalink');
  const url = await s.locator('#permalink-url').inputValue();
  const fresh = await page();
  await fresh.goto(base);
  await fresh.locator('#file-input').waitFor({ state: 'attached', timeout: 15000 });
  await paste(fresh, `\n   ${url}  \n`);
  await fresh.locator('#shared-banner').waitFor({ timeout: 15000 });
  assert.equal(await fresh.locator('#overview tbody tr').count(), 7);
  assert.equal(await fresh.locator('#error').count(), 0);
  // A diff made here, downloaded, then pasted in a fresh page (and dropped as a file): the same diff, as a claim.
  const [a, b] = await replicas();
  const p = await page();
  await p.goto(base);
  await dropOn(p, '#replica-a', await folder(a));
  await dropOn(p, '#replica-b', await folder(b));
  await p.locator('#first-divergent').waitFor({ timeout: 15000 });
  // What the diff says (a claim has no record bytes to show: those are left out of the comparison).
  const said = (page) => page.locator('#replica-diff .diff-result').evaluate((el) => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll('.record-hex, .bytes-at-divergence').forEach((x) => x.remove());
    return copy.textContent;
  });
  const shownHere = await said(p);
  const json = await download(p, '#diff-json');
  const q = await page();
  await q.goto(base);
  await q.locator('#file-input').waitFor({ state: 'attached', timeout: 15000 });
  await paste(q, json);
  await q.locator('#diff-claim').waitFor({ timeout: 15000 });
  assert.equal(await said(q), shownHere);
  const r = await page();
  await r.goto(base);
  await drop(r, [{ path: 'felix-diff.json', bytes: Buffer.from(json) }]);
  await r.locator('#diff-claim').waitFor({ timeout: 15000 });
  assert.equal(await r.locator('#first-divergent').textContent(), 'First divergent offset: 50');
  // The CLI's own diff --json opens too.
  const cli = spawnSync(CLI, ['diff', a, b, '--json']).stdout.toString();
  const c = await page();
  await c.goto(base);
  await c.locator('#file-input').waitFor({ state: 'attached', timeout: 15000 });
  await paste(c, cli);
  await c.locator('#diff-claim').waitFor({ timeout: 15000 });
  assert.equal(await c.locator('#first-divergent').textContent(), 'First divergent offset: 50');
  assert.equal(await c.locator('#side-a .path').textContent(), a);
});

test('issue 18 (links): the sample\'s files download as a tar that tar -x reads, and inspect on them is the page\'s report byte for byte', async () => {
  const p = await page();
  await p.goto(base);
  await p.locator('#sample-tar').waitFor({ timeout: 15000 });
  const [d] = await Promise.all([p.waitForEvent('download'), p.click('#sample-tar')]);
  assert.equal(d.suggestedFilename(), 'felix-sample.tar');
  const out = await scratch('sample-tar-');
  execFileSync('tar', ['-xf', await d.path(), '-C', out]);
  const [name] = await readdir(out);
  assert.match(name, /^acme_default_orders_0-[0-9a-f]{16}$/);
  assert.equal((await readdir(join(out, name))).length, 7);
  await p.click('#sample');
  await p.locator('#hash-timing').waitFor({ timeout: 15000 });
  const ours = await download(p, '#download-json');
  const cli = cliReport([name], out);
  if (cli !== ours) await writeFile(join(ARTIFACTS, 'sample-tar-cli.json'), cli).then(() => writeFile(join(ARTIFACTS, 'sample-tar-page.json'), ours));
  assert.equal(cli, ours, 'inspect on the downloaded files says what the page says of the sample');
});

test('issue 18 (links): a link that points at bytes selects exactly them, in view, once the files are dropped in a fresh page', async () => {
  const dir = shard('acme_default_payments_0');
  const p = await page();
  await p.goto(base);
  await drop(p, await folder(dir));
  await p.locator('#hash-timing').waitFor({ timeout: 30000 });
  await p.locator('#overview tbody tr', { hasText: '00000000000000000001.log' }).click();
  await p.locator('#jump').waitFor({ timeout: 15000 });
  await p.fill('#jump', '@50');
  await p.press('#jump', 'Enter');
  await p.locator('#records .rec.selected span:first-child', { hasText: /^50$/ }).waitFor();
  const label = await p.locator('#permalink-at').textContent();
  const [start, end] = label.match(/bytes (\d+)\.\.(\d+)$/).slice(1).map(Number);
  assert.ok(end > start, label);
  await p.click('#permalink-at');
  const url = await p.locator('#permalink-url').inputValue();
  const fresh = await page();
  await fresh.goto(url);
  await fresh.locator('#shared-banner').waitFor({ timeout: 15000 });
  // The banner says where the link points, and that no dropped file holds those bytes yet.
  const pointsAt = new RegExp(`^bytes ${start}\\.\\.${end} of .*00000000000000000001\\.log — `);
  assert.match(await fresh.locator('#shared-at').textContent(), pointsAt);
  assert.equal(await fresh.locator('#shared-at .point-status').textContent(), 'not dropped: drop that file (or its folder) to see them');
  await drop(fresh, await folder(dir));
  await fresh.waitForFunction(() => document.querySelector('#shared-at .point-status')?.textContent === 'the dropped file holds them (selected when it was read)', null, { timeout: 30000 });
  const first = fresh.locator(`#hex span[data-pos="${start}"].sel`);
  await first.waitFor({ timeout: 30000 });
  assert.ok(await first.isVisible(), 'the first byte pointed at is in view');
  assert.match(await fresh.locator('#overview tbody tr.selected').textContent(), /00000000000000000001\.log/);
  const selected = [...new Set(await fresh.locator('#hex span.sel[data-pos]').evaluateAll((s) => s.map((e) => Number(e.dataset.pos))))].sort((x, y) => x - y);
  assert.deepEqual(selected, Array.from({ length: end - start }, (_, i) => start + i), 'exactly the bytes the link points at');
  // The same link with a file of that name whose bytes differ (one rotten byte): held, but never called the report's.
  const rotten = await scratch('rotten-');
  const copy = join(rotten, basename(dir));
  await mkdir(copy);
  for (const f of await readdir(dir)) await copyFile(join(dir, f), join(copy, f));
  const bytes = await readFile(join(copy, '00000000000000000001.log'));
  bytes[start + 30] ^= 1;
  await writeFile(join(copy, '00000000000000000001.log'), bytes);
  const other = await page();
  await other.goto(url);
  await drop(other, await folder(copy));
  await other.waitForFunction(() => document.querySelector('#shared-at .point-status')?.textContent.startsWith('the dropped file of that name differs from the report\'s'), null, { timeout: 30000 });
  await rm(rotten, { recursive: true, force: true });
  // A crafted link pointing at a file its report does not list: words, not a panic.
  const report = JSON.parse(cliReport(['00000000000000000001.log'], dir));
  const q = await page();
  await q.goto(link({ report, at: { file: 'nope.log', start: 0, end: 1 } }));
  await q.locator('#error').waitFor({ timeout: 15000 });
  assert.equal(await q.locator('#error').textContent(), 'this link\'s report: the report is refused: at.file names nope.log, a file its report does not list');
  const r = await page();
  await r.goto(link({ report, at: { file: report.files[0].path, start: 5, end: 1e15 } }));
  await r.locator('#error').waitFor({ timeout: 15000 });
  assert.match(await r.locator('#error').textContent(), /at\.end is 1000000000000000, past the end of 00000000000000000001\.log \(\d+ bytes\)$/);
});

test('issue 18 (links): the page\'s plan JSON and the CLI\'s recover --dry-run --json reopen on the page, in the same words', async () => {
  const dir = shard('acme_default_payments_0');
  const p = await page();
  await p.goto(base);
  await drop(p, await folder(dir));
  const section = p.locator(`section.recovery[data-shard="${basename(dir)}"]`);
  await section.locator('.download-plan').waitFor({ state: 'attached', timeout: 20000 });
  await section.locator('details summary').click();
  // What the preview says, but for the dropped bytes (a claim has none to show) and
  // the plan's own JSON (the CLI's names the shard by the path it was given).
  const words = (s) => s.evaluate((el) => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll('.cut-bytes, .show-cut, pre.plan-json').forEach((x) => x.remove());
    return copy.textContent;
  });
  const said = await words(section);
  assert.match(said, /cut 00000000000000000001\.log at byte 1064/);
  const json = await download(p, `section.recovery[data-shard="${basename(dir)}"] .download-plan`);
  const cli = JSON.parse(spawnSync(CLI, ['recover', dir, '--dry-run', '--json']).stdout.toString());
  const mine = JSON.parse(json);
  assert.equal(mine.shards[0].path, basename(dir));
  mine.shards[0].path = cli.shards[0].path;
  assert.deepEqual(mine, cli, 'the downloaded plan is the CLI\'s, but for the path');
  // Pasted in a fresh page: the same preview, as a claim.
  const q = await page();
  await q.goto(base);
  await q.locator('#file-input').waitFor({ state: 'attached', timeout: 15000 });
  await q.click('#open-report summary');
  await q.fill('#report-text', json);
  await q.click('#open-report-text');
  await q.locator('#plan-claim').waitFor({ timeout: 15000 });
  assert.equal(await words(q.locator(`#plan-claim section.recovery[data-shard="${basename(dir)}"]`)), said);
  assert.equal(await q.locator('#plan-claim .show-cut').count(), 0, 'a shared plan has no bytes to show');
  assert.equal(await q.locator('#plan-claim pre.plan-json').textContent(), await section.locator('pre.plan-json').textContent());
  // The CLI's plan of the whole demo root, dropped as a file: one preview per shard.
  const root = spawnSync(CLI, ['recover', join(sample, 'root'), '--dry-run', '--json']).stdout.toString();
  const r = await page();
  await r.goto(base);
  await drop(r, [{ path: 'plan.json', bytes: Buffer.from(root) }]);
  await r.locator('#plan-claim').waitFor({ timeout: 15000 });
  assert.equal(await r.locator('#plan-claim section.recovery').count(), JSON.parse(root).shards.length);
  assert.equal(await words(r.locator(`#plan-claim section.recovery[data-shard="${basename(dir)}"]`)), said);
  assert.deepEqual(await axeViolations(r), [], 'the shared plan is accessible');
  await r.click('#plan-claim-close');
  await r.locator('#plan-claim').waitFor({ state: 'detached' });
});

// Issue 18, "The replica compare": a different shard warned of, a lost offset named, both replicas' bytes side by side.

test('issue 18 second review: a segment lost mid-shard and a damaged epochs file read as the CLI reads them; a shard under two roots reads as two', async () => {
  const orders = shard('acme_default_orders_0');
  const name = basename(orders);
  const parent = await scratch('review2-');
  const dir = join(parent, name);
  await mkdir(dir);
  for (const f of await readdir(orders)) if (f !== '00000000000000000004.log') await copyFile(join(orders, f), join(dir, f));
  const epochs = await readFile(join(dir, 'epochs'));
  epochs[epochs.length - 1] ^= 0x40;
  await writeFile(join(dir, 'epochs'), epochs);
  const cliLines = (args) => {
    const o = spawnSync(CLI, args);
    return `${o.stdout}${o.stderr}`.split('\n').map((l) => l.slice(l.indexOf(': ') + 2));
  };
  const verdict = cliLines(['inspect', dir]).find((l) => l.startsWith('verdict: ')).slice('verdict: '.length);
  assert.match(verdict, /^offsets \d+\.\.=\d+ are missing between two segments and a damaged epochs file \(not repairable: fetch them from a replica\)$/);
  const plan = cliLines(['recover', '--dry-run', dir]);
  const toSucceed = plan.find((l) => l.startsWith('recover refuses until'));
  assert.match(toSucceed, /^recover refuses until the segment with offsets \d+\.\.=\d+ \(missing before 00000000000000000005\.log\) is restored/);
  const advice = plan.find((l) => l.startsWith('epochs reads as empty'));
  assert.ok(advice, plan.join('\n'));
  const p = await page({ width: 320, height: 900 });
  await p.goto(base);
  await drop(p, await folder(dir));
  await p.locator('#verdicts li').first().waitFor({ timeout: 20000 });
  assert.equal(await p.locator('#verdicts li .sentence').textContent(), verdict);
  const section = p.locator(`section.recovery[data-folder="${name}"]`);
  await section.locator('.to-succeed').waitFor({ timeout: 20000 });
  assert.equal(await section.locator('.to-succeed').textContent(), `To make recovery succeed: ${toSucceed}`);
  assert.equal(await section.locator('.to-succeed code').first().innerText(), 'felix-storage diff', 'code, its backticks not drawn');
  assert.equal(await section.locator('.epochs-advice').textContent(), `The epochs file: ${advice}`);
  assert.equal(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scroll at 320 px');
  // Only the epochs damaged (the segment back): recovery changes nothing, and says what to do instead of "nothing to do".
  await copyFile(join(orders, '00000000000000000004.log'), join(dir, '00000000000000000004.log'));
  const q = await page();
  await q.goto(base);
  await drop(q, await folder(dir));
  const alone = q.locator(`section.recovery[data-folder="${name}"]`);
  await alone.locator('.epochs-advice').waitFor({ timeout: 20000 });
  assert.match(await alone.locator('.verdict').textContent(), /^recovery changes nothing in this shard/);
  assert.equal(await alone.locator('code.command').count(), 0, 'nothing to run');
  // The same shard folder under two roots: two rows told apart, two previews named apart.
  const payments = shard('acme_default_payments_0');
  const pname = basename(payments);
  const two = (await readdir(payments)).sort().flatMap((f) => ['a', 'b'].map((r) => ({ path: `${r}/${pname}/${f}`, from: join(payments, f) })));
  const r = await page();
  await r.goto(base);
  await drop(r, two);
  for (const root of ['a', 'b']) await r.locator(`section.recovery[data-folder="${root}/${pname}"] .verdict`).waitFor({ timeout: 20000 });
  const cells = await r.locator('#overview td.shard').allTextContents();
  assert.ok(cells.includes(`a/${pname}/`) && cells.includes(`b/${pname}/`), cells.join(', '));
  const headings = await r.locator('section.recovery h3').allTextContents();
  assert.deepEqual(headings.sort(), [`Recovery preview: a/${pname}`, `Recovery preview: b/${pname}`]);
  assert.deepEqual(await axeViolations(r), [], 'two previews, two names');
  await rm(parent, { recursive: true, force: true });
});

// Upstream's broker builds the next segment before it swaps it in and installs it before it flushes the one it retires:
// a crash leaves a header-only newest segment at a base that is not where the retired one ends, and that one's last record torn.
test('a rollover a crash left unfinished reads on the page as the CLI reads it: the verdict, the note on the segment that never took effect, the plan', async () => {
  const parent = await scratch('unfinished-roll-');
  const root = join(parent, 'root');
  execFileSync(CLI, ['produce', root, '--shard', 'acme/default/orders/0'], { input: 'one\ntwo\nthree\nfour\n' });
  const name = (await readdir(root))[0];
  const dir = join(root, name);
  const retired = await readFile(join(dir, '00000000000000000000.log'));
  await writeFile(join(dir, '00000000000000000000.log'), retired.subarray(0, retired.length - 2));
  await writeFile(join(dir, '00000000000000000001.log'), retired.subarray(0, 32));
  await rm(join(dir, 'writer.lock'), { force: true });
  const lines = `${spawnSync(CLI, ['inspect', dir]).stdout}`.split('\n').map((l) => l.slice(l.indexOf(': ') + 2));
  const verdict = lines.find((l) => l.startsWith('verdict: ')).slice('verdict: '.length);
  assert.equal(verdict, 'a torn tail and 1 unfinished segment that `recover` would fix');
  const note = lines.find((l) => l.startsWith('note: a rollover that never took effect')).slice('note: '.length);
  const p = await page();
  await p.goto(base);
  await drop(p, await folder(dir));
  await p.locator('#verdicts li').first().waitFor({ timeout: 20000 });
  assert.equal(await p.locator('#verdicts li .sentence').textContent(), verdict);
  const row = p.locator('#overview tr', { hasText: '00000000000000000001.log' });
  assert.ok((await row.locator('li.note').allTextContents()).includes(`note: ${note}`), 'the note beside its file');
  const actions = await p.locator(`section.recovery[data-folder="${name}"] ol.actions`).textContent({ timeout: 20000 });
  assert.match(actions, /00000000000000000001\.log/);
  assert.match(actions, /00000000000000000000\.log/);
  assert.deepEqual(await axeViolations(p), []);
  await rm(parent, { recursive: true, force: true });
});

test('issue 18 compare: the demo\'s orders against its payments warns of two different shards and advises no truncation, as the CLI does', async () => {
  const root = join(sample, 'root');
  const shards = await readdir(root);
  const orders = join(root, shards.find((s) => s.startsWith('acme_default_orders_0-')));
  const payments = join(root, shards.find((s) => s.startsWith('acme_default_payments_0-')));
  const cli = spawnSync(CLI, ['diff', orders, payments]).stdout.toString();
  const warning = cli.split('\n').find((l) => l.startsWith('WARNING: ')).slice('WARNING: '.length);
  const p = await page();
  await p.goto(base);
  await dropOn(p, '#replica-a', await folder(orders));
  await dropOn(p, '#replica-b', await folder(payments));
  await p.locator('#diff-shards').waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#diff-shards').textContent(), warning, 'the codec\'s one wording');
  assert.match(warning, /^A and B are different shards: A is acme_default_orders_0-[0-9a-f]{16}, B is acme_default_payments_0-[0-9a-f]{16} \(their shard names and keys differ\)/);
  const section = await p.locator('#replica-diff').textContent();
  assert.ok(!/truncates to/.test(section), section);
  assert.equal(await p.locator('#side-a .truncation').textContent(), 'A is no follower of B (a different shard): do not truncate it to match');
  assert.equal(await p.locator('#diff-verdict').textContent(), 'The replicas are different.');
  assert.equal(await p.locator('#diff-shards').getAttribute('role'), 'alert');
});

// Replica B is A's copy with one payload byte of offset 3 rotted.
async function rottedReplicas() {
  const dir = await scratch('rot-');
  const [a, b] = [join(dir, 'a'), join(dir, 'b')];
  execFileSync(CLI, ['produce', a, '--shard', 'acme/default/orders/0', '--batch', '100'], { input: Array.from({ length: 20 }, (_, i) => `${SECRET}-common-${i}`).join('\n') + '\n' });
  const shardName = (await readdir(a))[0];
  await mkdir(join(b, shardName), { recursive: true });
  for (const f of await readdir(join(a, shardName))) await copyFile(join(a, shardName, f), join(b, shardName, f));
  let rotted = false;
  for (const f of (await readdir(join(b, shardName))).filter((f) => f.endsWith('.log'))) {
    const bytes = await readFile(join(b, shardName, f));
    const at = bytes.indexOf(`${SECRET}-common-3`);
    if (at < 0) continue;
    bytes[at] ^= 0x20;
    await writeFile(join(b, shardName, f), bytes);
    rotted = true;
  }
  assert.ok(rotted);
  return [join(a, shardName), join(b, shardName)];
}

test('issue 18 compare: B\'s rot names the lost offset and that A still holds it (the CLI\'s sentence), with both replicas\' bytes side by side', async () => {
  const [a, b] = await rottedReplicas();
  const cli = spawnSync(CLI, ['diff', a, b]).stdout.toString();
  const lost = cli.split('\n').find((l) => l.startsWith('B lost offset 3 '));
  assert.ok(lost, cli);
  const p = await page();
  await p.goto(base);
  await dropOn(p, '#replica-a', await folder(a));
  await dropOn(p, '#replica-b', await folder(b));
  await p.locator('p.lost').waitFor({ timeout: 15000 });
  assert.equal(await p.locator('#first-divergent').textContent(), 'First divergent offset: none');
  assert.deepEqual(await p.locator('p.lost').allTextContents(), [lost]);
  assert.match(lost, /^B lost offset 3 \(RecordChecksum at byte \d+ of 0+\.log\); A still holds it intact, at byte \d+ of 0+\.log: copy it from A$/);
  // Both replicas' bytes at offset 3, the one rotted byte marked (masked: a payload byte), nothing else.
  const table = p.locator('#side-by-side');
  assert.equal(await table.getAttribute('data-offset'), '3');
  assert.match(await table.locator('caption').textContent(), /^Offset 3 \(one replica lost it, the other holds it\): both replicas' bytes, 1 of \d+ differ \(marked\)$/);
  assert.equal(await table.locator('.hex-a mark.differs').count(), 1);
  assert.equal(await table.locator('.hex-b mark.differs').count(), 1);
  assert.equal(await table.locator('mark.differs').first().textContent(), '•• ');
  await p.check('#unmask');
  const [ca, cb] = [await table.locator('.hex-a mark.differs').textContent(), await table.locator('.hex-b mark.differs').textContent()];
  assert.equal(parseInt(ca, 16) ^ parseInt(cb, 16), 0x20, `${ca} vs ${cb}: the flipped bit`);
  assert.deepEqual(await axeViolations(p), [], 'the side-by-side bytes are accessible');
  await table.scrollIntoViewIfNeeded();
  await p.screenshot({ path: join(ARTIFACTS, 'replica-side-by-side.png') });
  // On a phone the two columns scroll inside their own box, never the page.
  await p.setViewportSize({ width: 390, height: 844 });
  const box = await p.locator('.side-by-side-wrap').boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 390, `the bytes' box ${JSON.stringify(box)} fits 390 px`);
  await table.scrollIntoViewIfNeeded();
  await p.screenshot({ path: join(ARTIFACTS, 'replica-side-by-side-390.png') });
});

test('issue 18 compare: two replicas that diverge at 50 show both records\' bytes side by side, the differing ones marked', async () => {
  const [a, b] = await replicas();
  const p = await page();
  await p.goto(base);
  await dropOn(p, '#replica-a', await folder(a));
  await dropOn(p, '#replica-b', await folder(b));
  const table = p.locator('#side-by-side');
  await table.waitFor({ timeout: 15000 });
  assert.equal(await table.getAttribute('data-offset'), '50');
  assert.match(await table.locator('caption').textContent(), /^Offset 50 \(the records differ\)/);
  // The checksum (bytes 24..27 of the header) differs on both sides, shown unmasked; payload bytes masked.
  const headerMarks = await table.locator('.hex-a mark.differs.header').count();
  assert.ok(headerMarks >= 4, `${headerMarks} header bytes marked`);
  assert.ok((await table.locator('.hex-a mark.differs.masked').count()) > 0);
  assert.equal(await p.locator('#side-by-side .payload').count(), 0);
});

// Issue 18, "Beyond the best hex inspectors": Find.

test('issue 18 find: a known payload string in the sample shard is found in its record, and next selects its bytes in the hex view', async () => {
  const p = await sampleOpened('#overview tbody tr');
  await p.fill('#find-query', '"order_id":57,');
  await p.press('#find-query', 'Enter');
  await p.waitForFunction(() => document.querySelector('#find-status')?.textContent === '1 match in 1 file', null, { timeout: 15000 });
  const match = p.locator('#find-results li.match');
  assert.equal(await match.count(), 1);
  assert.equal(await match.getAttribute('data-record'), '57');
  const position = Number(await match.getAttribute('data-position'));
  assert.match(await match.textContent(), new RegExp(`00000000000000000001\\.log · byte ${position} \\(0x${position.toString(16)}\\) · in record 57$`));
  await p.click('#find-next');
  await p.locator('section.detail h2').waitFor({ timeout: 15000 });
  assert.match(await p.locator('section.detail h2').textContent(), /00000000000000000001\.log/);
  // The match's 14 bytes are the hex view's selection.
  await p.locator(`#hex span[data-pos="${position}"].sel`).waitFor({ timeout: 15000 });
  await p.locator(`#hex span[data-pos="${position + 13}"].sel`).waitFor();
  assert.equal(await p.locator(`#hex span[data-pos="${position + 14}"].sel`).count(), 0);
  assert.equal(await match.getAttribute('aria-current'), 'true');
  // A query that is not hex is refused in words.
  await p.selectOption('#find-mode', 'hex');
  await p.fill('#find-query', 'de ad zz');
  await p.click('#find-go');
  assert.match(await p.locator('#find-refused').textContent(), /^character 7 \(z\) is not a hex digit/);
  // The last search's matches do not answer the refused query: they go with it.
  assert.equal(await p.locator('#find-results li.match').count(), 0);
  assert.equal(await p.locator('#find-status').count(), 0);
  assert.deepEqual(p.errors, []);
  await p.locator('#find').scrollIntoViewIfNeeded();
  await p.screenshot({ path: join(ARTIFACTS, 'find-sample.png') });
});

test('issue 18 review: Find says which of its listed matches the list draws, numbered as listed; a long hex query is measured whole', async () => {
  const p = await sampleOpened('#overview tbody tr');
  await p.fill('#find-query', 'order_id');
  await p.press('#find-query', 'Enter');
  await p.waitForFunction(() => /^\d+ matches in 3 files$/.test(document.querySelector('#find-status')?.textContent ?? ''), null, { timeout: 15000 });
  const total = Number((await p.locator('#find-status').textContent()).split(' ')[0]);
  assert.ok(total > 100, `${total}`);
  assert.equal(await p.locator('#find-results li.match').count(), 100);
  assert.equal(await p.locator('#find-drawn').textContent(), `drawn here: matches 1 to 100 of the ${total} listed (${total - 100} not drawn; next and previous step to them)`);
  // Stepping back to the last match draws the list's end, numbered from where it starts.
  await p.click('#find-prev');
  await p.locator('#find-results li.match[aria-current="true"]').waitFor();
  assert.equal(await p.locator('#find-drawn').textContent(), `drawn here: matches ${total - 99} to ${total} of the ${total} listed (${total - 100} not drawn; next and previous step to them)`);
  assert.equal(await p.locator('#find-results').getAttribute('start'), String(total - 99));
  assert.deepEqual(await axeViolations(p), []);
  await p.selectOption('#find-mode', 'hex');
  await p.fill('#find-query', '00'.repeat(5000));
  await p.click('#find-go');
  assert.equal(await p.locator('#find-refused').textContent(), 'the query is 5000 bytes long; at most 256 are searched');
  // Digits are never joined across a space: "0 0" is not the byte 00.
  await p.fill('#find-query', '0 0');
  await p.click('#find-go');
  await p.waitForFunction(() => document.querySelector('#find-refused')?.textContent.startsWith('the hex digits from character 1 are an odd number'), null, { timeout: 5000 });
});

test('issue 18 review: the jump box speaks of the file shown — offset 80 of the sample is the next segment\'s, not missing from the shard', async () => {
  const p = await sampleOpened('#jump');
  await p.fill('#jump', '@80');
  await p.press('#jump', 'Enter');
  await p.locator('.jump-error').waitFor();
  assert.equal(await p.locator('.jump-error').textContent(), 'no such offset 80 in this file (its last is 79)');
  // Nothing, a bare @, a negative number: words that name what was typed (not an empty quote, not a time).
  for (const [typed, said] of [
    ['', 'type a byte position (1234 or 0x4d2), a record offset (@60) or a time (2026-11-01T09:00:15Z)'],
    ['@', '@ is not a record offset (try @60)'],
    ['-1', '-1 is not a byte position (try 1234, 0x4d2 or @offset)'],
  ]) {
    await p.fill('#jump', typed);
    await p.press('#jump', 'Enter');
    await p.waitForFunction((said) => document.querySelector('.jump-error')?.textContent === said, said, { timeout: 5000 });
  }
});

test('issue 18 find: hex bytes across a whole dropped root: every occurrence counted as a naive search counts it, n/p stepping wraps', async () => {
  const files = await rootFiles();
  const p = await page();
  await p.goto(base);
  await drop(p, files);
  await p.locator('#hash-timing').waitFor({ timeout: 30000 });
  const needle = Buffer.from('"customer":"c-7');
  let want = 0;
  for (const f of files) {
    const bytes = await readFile(f.from);
    for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + 1)) want += 1;
  }
  assert.ok(want > 10, `${want}`);
  await p.selectOption('#find-mode', 'hex');
  await p.fill('#find-query', needle.toString('hex').replace(/(..)/g, '$1 ').trim());
  await p.click('#find-go');
  await p.waitForFunction(() => /^\d+ matches in \d+ files$/.test(document.querySelector('#find-status')?.textContent ?? ''), null, { timeout: 20000 });
  assert.match(await p.locator('#find-status').textContent(), new RegExp(`^${want} matches in `));
  // Previous from nothing selects the last; next from the last wraps to the first.
  await p.click('#find-prev');
  await p.locator('#find-results li.match[aria-current="true"]').waitFor();
  const last = await p.locator('#find-results li.match[aria-current="true"]').getAttribute('data-position');
  await p.click('#find-next');
  await p.waitForFunction((last) => document.querySelector('#find-results li.match[aria-current="true"]')?.getAttribute('data-position') !== last, last);
  assert.equal(await p.locator('#find-results li.match').first().getAttribute('aria-current'), 'true');
  const first = Number(await p.locator('#find-results li.match').first().getAttribute('data-position'));
  await p.locator(`#hex span[data-pos="${first}"].sel`).waitFor({ timeout: 15000 });
  assert.deepEqual(await axeViolations(p), [], 'the find panel is accessible');
});

test('issue 18 find: in a 1 GiB segment, a record header that straddles a read boundary is found in its record, in bounded worker memory', async () => {
  const { dir, last } = await gibSegment();
  try {
    // Records of 728 bytes from byte 32; a header's offset and time fields (16 bytes, both the offset) start 4 bytes in.
    // The worker reads 64 KiB, doubling to 16 MiB, in 4 MiB pieces: pieces end at 16 MiB - 64 KiB + j × 4 MiB.
    let target;
    for (let j = 0; j < 250 && target === undefined; j++) {
      const boundary = (16 << 20) - (64 << 10) + j * (4 << 20);
      for (let o = Math.floor((boundary - 36) / 728) - 1; o <= Math.floor((boundary - 36) / 728) + 1; o++) {
        const at = 36 + o * 728;
        if (at < boundary && at + 16 > boundary && o <= last) target = { o, at };
      }
    }
    assert.ok(target, 'a header across a boundary');
    const needle = Buffer.alloc(16);
    needle.writeBigUInt64BE(BigInt(target.o), 0); needle.writeBigUInt64BE(BigInt(target.o), 8);
    const p = await page();
    const workers = [];
    p.on('worker', (w) => workers.push(w));
    await p.goto(base);
    await p.setInputFiles('#file-input', join(dir, '00000000000000000000.log'));
    await p.locator('#overview tbody tr').first().waitFor({ timeout: 60000 });
    await p.selectOption('#find-mode', 'hex');
    await p.fill('#find-query', needle.toString('hex'));
    await p.click('#find-go');
    await p.waitForFunction(() => /^1 match in 1 file$|^no match$/.test(document.querySelector('#find-status')?.textContent ?? ''), null, { timeout: 300000 });
    assert.equal(await p.locator('#find-status').textContent(), '1 match in 1 file');
    const match = p.locator('#find-results li.match');
    assert.deepEqual([await match.getAttribute('data-position'), await match.getAttribute('data-record')], [String(target.at), String(target.o)]);
    // The find worker (the page's newest) held a bounded amount of memory for a 1,024 MiB file.
    const findWorker = workers[workers.length - 1];
    const wasm = await findWorker.evaluate(() => wasm_bindgen.wasm_memory_bytes());
    assert.ok(wasm <= 64 << 20, `find worker wasm memory ${(wasm / 1048576).toFixed(1)} MiB`);
    console.log(`find over 1 GiB: worker wasm ${(wasm / 1048576).toFixed(1)} MiB`);
    assert.deepEqual([p.errors, p.panics], [[], []]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('issue 18 find: another drop clears the last drop\'s matches (they name files it no longer holds)', async () => {
  const p = await sampleOpened('#overview tbody tr');
  await p.fill('#find-query', '"order_id":57,');
  await p.press('#find-query', 'Enter');
  await p.waitForFunction(() => document.querySelector('#find-status')?.textContent === '1 match in 1 file', null, { timeout: 15000 });
  await drop(p, await folder(shard('acme_default_payments')));
  await p.waitForFunction(() => !document.querySelector('#overview')?.textContent.includes('orders'), null, { timeout: 15000 });
  await p.locator('#find-status').waitFor({ state: 'detached', timeout: 15000 });
  assert.equal(await p.locator('#find-results li.match').count(), 0);
  assert.ok(await p.locator('#find-next').isDisabled(), 'nothing to step to');
  // A search of the new drop still works.
  await p.fill('#find-query', '"order_id":57,');
  await p.press('#find-query', 'Enter');
  await p.waitForFunction(() => /^(no match|1 match in 1 file|\d+ matches in \d+ files?)$/.test(document.querySelector('#find-status')?.textContent ?? ''), null, { timeout: 15000 });
  for (const m of await p.locator('#find-results li.match').allTextContents()) assert.match(m, /^acme_default_payments/);
});

test('a drop holding one path twice (two same-named folders from different places) is refused in words, not inspected as one shard', async () => {
  const p = await page();
  await p.goto(base);
  const s = shard('acme_default_payments');
  await drop(p, [
    { path: 'replica/00000000000000000000.log', from: join(s, '00000000000000000000.log') },
    { path: 'replica/00000000000000000000.log', from: join(s, '00000000000000000001.log') },
  ]);
  const alert = p.locator('[role=alert]', { hasText: 'is dropped twice' });
  await alert.waitFor({ timeout: 15000 });
  assert.match(await alert.textContent(), /replica\/00000000000000000000\.log.* is dropped twice \(two folders or files of that name, from different places\)/);
  assert.equal(await p.locator('#overview tbody tr').count(), 0, 'nothing inspected');
  // One of them alone is inspected.
  await drop(p, [{ path: 'replica/00000000000000000000.log', from: join(s, '00000000000000000000.log') }]);
  await p.locator('#overview tbody tr').first().waitFor({ timeout: 15000 });
  assert.equal(await p.locator('[role=alert]', { hasText: 'is dropped twice' }).count(), 0, 'the error is gone');
});

// Issue 20: time as an axis.

// RFC 3339 UTC with the micros, as the codec writes it (format_micros).
function utc(micros) {
  const ms = micros / 1000n;
  return new Date(Number(ms)).toISOString().replace(/\.\d{3}Z$/, `.${String(micros % 1_000_000n).padStart(6, '0')}Z`);
}

// A shard folder of one segment of 40 records whose clock goes back mid-segment: offsets 0..19 written
// at T0 + o s (+ 250 µs), 20..29 at T0 + (o − 25) s — the clock stepped back 24 s, below the first —
// and 30..39 at T0 + (o − 10) s, past all before; offset 30's payload rotted (a damaged record
// between, the first to pass T0 + 19 s: its timestamp is not believed).
const T0 = 1_796_133_600_000_000n; // 2026-12-01T14:00:00Z
const clockTime = (o) => T0 + BigInt(o < 20 ? o : o < 30 ? o - 25 : o - 10) * 1_000_000n + 250n;
async function clockBackShard() {
  const dir = await scratch('clock-');
  const shardDir = join(dir, 'acme_default_clock_0');
  await mkdir(shardDir);
  const parts = [];
  const header = segmentHeader();
  parts.push(header);
  const positions = [];
  let at = 32;
  for (let o = 0; o < 40; o++) {
    const payload = Buffer.from(`clock record ${o}`);
    const h = recordHeader(o, clockTime(o), payload);
    if (o === 30) payload[0] ^= 0x01;
    parts.push(h, payload);
    positions.push(at);
    at += 28 + payload.length;
  }
  await writeFile(join(shardDir, '00000000000000000000.log'), Buffer.concat(parts));
  return { dir, shardDir, positions };
}

test('issue 20: a clock that went back mid-segment, a damaged record between — each span in UTC with the micros, the CLI\'s words; a time jumps to the record Kafka\'s rule picks', async () => {
  const { dir, shardDir, positions } = await clockBackShard();
  try {
    const text = spawnSync(CLI, ['inspect', basename(shardDir)], { cwd: dir }).stdout.toString();
    const spanWords = `written ${utc(clockTime(0))} to ${utc(clockTime(39))} (timestamps go back: earliest ${utc(clockTime(20))}, latest ${utc(clockTime(39))})`;
    assert.ok(text.includes(`: time: the shard's records were ${spanWords}\n`), text);
    const p = await page();
    await p.goto(base);
    await drop(p, await folder(shardDir));
    await p.locator('#verdicts li .shard-time').waitFor({ timeout: 15000 });
    // Beside the verdict, in the overview row and the file's detail: the CLI's words.
    assert.equal(await p.locator('#verdicts li .shard-time').textContent(), `time: the shard's records were ${spanWords}`);
    assert.equal(await p.locator('#overview td.time').textContent(), spanWords);
    await p.locator('#file-time').waitFor({ timeout: 15000 });
    assert.equal(await p.locator('#file-time').textContent(), `time: ${spanWords}`);
    // The record table's time column: each record's timestamp as written (the damaged one's as its header
    // says), around the damage selected on open, where the clock jumps forward again.
    await p.locator('#records .rec.selected').waitFor({ timeout: 15000 });
    const rows = await p.locator('#records .rec').evaluateAll((rs) => rs.map((r) => [...r.querySelectorAll('span')].map((s) => s.textContent)));
    for (const o of [29, 30, 31]) assert.ok(rows.some((r) => r[0] === String(o)), `offset ${o} is drawn: ${rows.map((r) => r[0])}`);
    for (const r of rows) assert.equal(r[1], utc(clockTime(Number(r[0]))) + (r[0] === '20' ? ' (clock back)' : ''), `offset ${r[0]}`);
    // The file map: its span top to bottom, and each run's.
    assert.match(await p.locator('#map-summary').textContent(), new RegExp(`; records ${spanWords.replace(/[().]/g, '\\$&')}, top to bottom\\.`));
    const titles = await p.locator('#file-map .run').evaluateAll((rs) => rs.map((r) => r.title));
    assert.ok(titles.some((t) => / verified; records written \d{4}-\d\d-\d\dT[\d:]+\.\d{6}Z to /.test(t)), titles.join('\n'));
    // Jump to a time: the first record, in offset order, whose timestamp is at or after it.
    const jump = async (to) => { await p.fill('#jump', to); await p.press('#jump', 'Enter'); };
    const selects = async (o) => {
      await p.locator('#records .rec.selected span:first-child', { hasText: new RegExp(`^${o}$`) }).waitFor({ timeout: 15000 });
      const byte = p.locator(`#hex span[data-pos="${positions[o] + 30}"]`);
      await byte.waitFor({ timeout: 15000 });
      assert.match(await byte.getAttribute('class'), /\bsel\b/, `offset ${o}'s bytes are selected in the hex view`);
    };
    // Where the clock went back, the table says so: offset 20, written before offset 19.
    await jump('@20');
    await selects(20);
    assert.equal(await p.locator('#records .rec.selected span').nth(1).textContent(), `${utc(clockTime(20))} (clock back)`);
    assert.equal(await p.locator('#records .rec .clock-back').count(), 1);
    // 14:00:05Z: offset 5 (offset 30, damaged, and offset 31 reach it too, but later).
    await jump('time 2026-12-01T14:00:05Z');
    await selects(5);
    // 14:00:19.5: nothing before offset 30 reaches it (the clock went back at 20); offset 30 would, but it is damaged: offset 31.
    await jump(`time @${T0 + 19_500_000n}`);
    await selects(31);
    await jump('2026-12-01T16:00:19.6+02:00');
    await selects(31);
    assert.equal(await p.locator('.jump-error').count(), 0);
    // Past every record: refused in words.
    await jump('time 2026-12-01T14:00:30Z');
    await p.locator('.jump-error').waitFor();
    assert.equal(await p.locator('.jump-error').textContent(),
      `no record at or after 2026-12-01T14:00:30.000000Z: every intact record was written before it (the latest at ${utc(clockTime(39))})`);
    await jump('time 2026-12-01T25:00:00Z');
    await p.locator('.jump-error', { hasText: 'is not a time: character 12' }).waitFor();
    // The exports: the JSON is the CLI's byte for byte (its time field and all); the Markdown carries each span.
    await p.locator('#hash-timing').waitFor({ timeout: 15000 });
    assert.equal(await download(p, '#download-json'), cliReport([basename(shardDir)], dir));
    const md = readMarkdown(await download(p, '#download-md'));
    assert.deepEqual(md.headings.slice(0, 3), ['Felix storage report', 'Time', 'Findings']);
    assert.ok(md.html.includes(spanWords.replace(/'/g, '&#39;')), md.html);
    assert.deepEqual(md.active, []);
    // The permalink, opened fresh: the shard's span beside its verdict, from the shared report.
    await p.click('#permalink');
    const url = await p.locator('#permalink-url').inputValue();
    const fresh = await page();
    await fresh.goto(url);
    await fresh.locator('#verdicts li .shard-time').waitFor({ timeout: 15000 });
    assert.equal(await fresh.locator('#verdicts li .shard-time').textContent(), `time: the shard's records were ${spanWords}`);
    assert.equal(await fresh.locator('#overview td.time').textContent(), spanWords);
    assert.deepEqual(await axeViolations(p), [], 'the time views are accessible');
    await p.screenshot({ path: join(ARTIFACTS, 'inspector-time.png'), fullPage: true });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('issue 20: a link whose time contradicts itself is refused by name', async () => {
  const { dir, shardDir } = await clockBackShard();
  try {
    const report = JSON.parse(cliReport([basename(shardDir)], dir));
    const bad = structuredClone(report);
    bad.files[0].time.first = bad.files[0].time.max + 1;
    const p = await page();
    await p.goto(link({ report: bad }));
    await p.locator('#error').waitFor({ timeout: 15000 });
    assert.match(await p.locator('#error').textContent(), /files\[0\]\.time\.first is \d+, outside \d+\.\.=\d+ \(min\.\.max\)/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('issue 20 compare: the first divergent record\'s time on both sides, in UTC with the micros; the divergent records\' times in the CLI\'s words', async () => {
  const [a, b] = await replicas();
  const cli = JSON.parse(spawnSync(CLI, ['diff', a, b, '--json']).stdout.toString());
  const cliText = spawnSync(CLI, ['diff', a, b]).stdout.toString();
  const p = await page();
  await p.goto(base);
  await dropOn(p, '#replica-a', await folder(a));
  await dropOn(p, '#replica-b', await folder(b));
  await p.locator('#divergent-time').waitFor({ timeout: 15000 });
  for (const side of ['a', 'b']) {
    const micros = BigInt(cli.divergence[side].timestamp_micros);
    assert.equal(await p.locator(`.time-${side}`).textContent(), `${utc(micros)} (${micros} µs)`);
    assert.ok((await p.locator('#side-by-side thead').textContent()).includes(`written ${utc(micros)}`));
  }
  const line = cliText.split('\n').find((l) => l.startsWith("divergent records' times: "));
  assert.ok(line, cliText);
  assert.equal(await p.locator('#divergent-time').textContent(), line);
  const md = await download(p, '#diff-md');
  assert.ok(md.includes(utc(BigInt(cli.divergence.a.timestamp_micros)).replace(/[-:.]/g, '\\$&')), md);
  assert.deepEqual(await axeViolations(p), []);
});

// A segment of `records` small records, record o written at `ts(o)` µs, the payload of offset `rot` flipped.
async function timedSegment(records, ts, rot) {
  const dir = await scratch('timed-');
  const f = await open(join(dir, '00000000000000000000.log'), 'w');
  const header = segmentHeader();
  await f.write(header);
  const payload = Buffer.alloc(36, 0x74);
  const size = 28 + payload.length;
  const batch = Buffer.alloc(size * 65536);
  for (let o = 0; o < records;) {
    let at = 0;
    for (; at < batch.length && o < records; o++, at += size) {
      recordHeaderInto(batch, at, o, ts(o), payload);
      payload.copy(batch, at + 28);
      if (o === rot) batch[at + 28] ^= 0x01;
    }
    await f.write(batch.subarray(0, at));
  }
  await f.close();
  return dir;
}

test('issue 20, past the held rows: a time first reached after the clock went back, beyond the million rows the page holds, is read from the file; the damaged record there is passed over', async () => {
  // 1.4 million records a millisecond apart from T0; at offset 1.1 million the clock steps back 200 s, so the
  // first record at or after T0 + 1,100,000.5 ms is offset 1,300,001 — rotted — and the answer offset 1,300,002.
  const records = 1_400_000;
  const ts = (o) => T0 + BigInt(o < 1_100_000 ? o : o - 200_000) * 1000n;
  const dir = await timedSegment(records, ts, 1_300_001);
  try {
    const p = await twoCorePage();
    await p.setInputFiles('#file-input', join(dir, '00000000000000000000.log'));
    await p.locator('#records-heading', { hasText: `Records (${records}:` }).waitFor({ timeout: 120000 });
    const jump = async (to) => { await p.fill('#jump', to); await p.press('#jump', 'Enter'); };
    for (const [at, offset] of [[T0 + 1_100_000_500n, 1_300_002], [T0 + 5_500n, 6], [T0 + 1_100_000_500n, 1_300_002]]) {
      await jump(`time @${at}`);
      const selected = p.locator('#records .rec.selected');
      await selected.locator('span:first-child', { hasText: new RegExp(`^${offset}$`) }).waitFor({ timeout: 60000 });
      assert.equal(await selected.locator('span').nth(1).textContent(), utc(ts(offset)));
      const pos = 32 + offset * 64;
      assert.equal(await selected.locator('span').nth(3).textContent(), String(pos));
      const byte = p.locator(`#hex span[data-pos="${pos + 40}"]`);
      await byte.waitFor({ timeout: 30000 });
      assert.match(await byte.getAttribute('class'), /\bsel\b/);
    }
    assert.equal(await p.locator('.jump-error').count(), 0);
    const latest = ts(records - 1);
    await jump(`time @${latest + 1n}`);
    await p.locator('.jump-error').waitFor();
    assert.equal(await p.locator('.jump-error').textContent(),
      `no record at or after ${utc(latest + 1n)}: every intact record was written before it (the latest at ${utc(latest)})`);
    assert.deepEqual([p.errors, p.panics], [[], []]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('issue 20 attacked: a clock that went back across a damaged record is marked; a link with the real hash but a forged time differs once the file is dropped', async () => {
  const dir = await scratch('forged-time-');
  const shardDir = join(dir, 'acme_default_forged_0');
  await mkdir(shardDir);
  // Offsets 0..4 written at T0 + 100, 200, (300, rotted), 50, 60 µs: offset 3 is below offset 1, the damaged 2 between.
  const parts = [segmentHeader()];
  [100n, 200n, 300n, 50n, 60n].forEach((dt, o) => {
    const payload = Buffer.from(`forged ${o}`);
    const h = recordHeader(o, T0 + dt, payload);
    if (o === 2) payload[0] ^= 0x01;
    parts.push(h, payload);
  });
  await writeFile(join(shardDir, '00000000000000000000.log'), Buffer.concat(parts));
  try {
    const report = JSON.parse(cliReport([basename(shardDir)], dir));
    const forged = structuredClone(report);
    forged.files[0].time = { first: 1, last: 2, min: 1, max: 3 };
    const p = await page();
    await p.goto(link({ report: forged }));
    await p.locator('#overview td.check[data-check="unchecked"]').waitFor({ timeout: 15000 });
    await drop(p, await folder(shardDir));
    const differs = p.locator('#overview td.check[data-check="differs"]');
    await differs.waitFor({ timeout: 15000 });
    const why = await differs.locator('.reasons li').allTextContents();
    assert.deepEqual(why, [`time differs: the report says written ${utc(1n)} to ${utc(2n)} (timestamps go back: earliest ${utc(1n)}, latest ${utc(3n)}); `
      + `the file's records were written ${utc(T0 + 100n)} to ${utc(T0 + 60n)} (timestamps go back: earliest ${utc(T0 + 50n)}, latest ${utc(T0 + 200n)})`]);
    // The record table: offset 3 marked, written before offset 1 (offset 2's time is not believed either way).
    await p.locator('#records .rec').nth(4).waitFor({ timeout: 15000 });
    const rows = await p.locator('#records .rec').evaluateAll((rs) => rs.map((r) => [...r.querySelectorAll('span')].map((s) => s.textContent)));
    assert.deepEqual(rows.map((r) => [r[0], r[1]]), [0, 1, 2, 3, 4].map((o) => [String(o), utc(T0 + [100n, 200n, 300n, 50n, 60n][o]) + (o === 3 ? ' (clock back)' : '')]));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('issue 18 third review: one folder name under two roots reads as two verdicts, as the CLI reads them; a shared report with a forged gap and record count differs from the dropped folder', async () => {
  const orders = shard('acme_default_orders_0');
  const payments = shard('acme_default_payments_0');
  const parent = await scratch('review3-');
  try {
    // a/x: orders with a segment lost from its middle; b/x: payments (a torn newest tail).
    for (const [root, from] of [['a', orders], ['b', payments]]) {
      await mkdir(join(parent, root, 'x'), { recursive: true });
      for (const f of await readdir(from)) if (!(root === 'a' && f.startsWith('00000000000000000007.'))) await copyFile(join(from, f), join(parent, root, 'x', f));
    }
    const o = spawnSync(CLI, ['inspect', 'a/x', 'b/x'], { cwd: parent }).stdout.toString();
    const cli = o.split('\n').filter((l) => l.includes(': verdict: ')).map((l) => l.split(': verdict: '));
    assert.deepEqual(cli.map((v) => v[0]), ['a/x', 'b/x'], o);
    assert.equal(cli[1][1], 'a torn tail and a stale index that `recover` would fix', 'b\'s torn newest tail is recover\'s to cut');
    const p = await page({ width: 320, height: 900 });
    await p.goto(base);
    const under = async (root) => (await folder(join(parent, root, 'x'))).map((f) => ({ ...f, path: `${root}/${f.path}` }));
    await drop(p, [...await under('a'), ...await under('b')]);
    await p.locator('#verdicts li').nth(1).waitFor({ timeout: 20000 });
    const shown = await p.locator('#verdicts li').evaluateAll((lis) => lis.map((li) => [li.dataset.label, li.querySelector('.sentence').textContent]));
    assert.deepEqual(shown, cli);
    assert.deepEqual(await axeViolations(p), []);
    // A report of a/x with the gap's offsets and a record count forged: dropped, the folder differs and says where.
    const report = JSON.parse(cliReport(['a/x'], parent));
    const newest = report.files.find((f) => f.findings.some((x) => x.kind === 'SegmentDiscontinuity'));
    const gap = newest.findings.find((x) => x.kind === 'SegmentDiscontinuity').discontinuity;
    const truth = `offsets ${gap.expected}..=${gap.found - 1} are missing between two segments`;
    gap.expected = gap.found - 1;
    newest.records += 1;
    const q = await page();
    await q.goto(base);
    await q.locator('#open-report summary').waitFor({ timeout: 15000 });
    await q.click('#open-report summary');
    await q.fill('#report-text', JSON.stringify(report));
    await q.click('#open-report-text');
    await q.locator('#verdicts li').first().waitFor({ timeout: 15000 });
    await drop(q, await under('a'));
    const differs = q.locator('#overview td.check[data-check="differs"]');
    await differs.first().waitFor({ timeout: 20000 });
    assert.equal(await differs.count(), 1);
    const reasons = await differs.locator('.reasons li').allTextContents();
    assert.deepEqual(reasons, [
      `SegmentDiscontinuity at byte 8: the report says offset ${gap.expected} is missing between two segments; the files say ${truth}`,
      `records: the report says ${newest.records}, the file has ${newest.records - 1}`,
    ]);
    assert.match(await q.locator('#check-status').textContent(), /, 1 differ,/);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
});
