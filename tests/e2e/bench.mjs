// Browser benchmark (a script, not a timed test), in Debian's headless
// Chromium. For each size (a .log of 4 KiB records, rot in record 10, a
// torn tail), in BENCH_ROUNDS interleaved rounds on one page per round:
//
//   - bare reads of the same File in a worker of the same page, every way
//     the browser offers: Blob.slice().arrayBuffer() (one read ahead, two,
//     and 8 MiB chunks), File.stream() (default reader, and BYOB into a
//     reused 4 MiB buffer), and FileReaderSync — the fastest is the baseline;
//   - the page: drop to first finding, drop to verified (the file's last
//     offset shown in the overview), drop to hashed (the report complete) —
//     both ways the page can run: the scan worker reading for itself (as on
//     one core) and a reader worker handing it the chunks (from two cores);
//   - peak page memory (wasm and JS heap; the workers' memory is bounded by
//     design: a 4 MiB read buffer each, the hash worker at most 64 MiB behind);
//   - the longest main-thread task from the drop until the detail views
//     have rendered;
//   - a folder of BENCH_FOLDER_SEGMENTS segments (300; 0 skips it) dropped
//     as one shard: every main-thread task over 50 ms (the Long Tasks API)
//     from the drop until every file is hashed and the detail views have
//     rendered, with when each began;
//   - CPU: the seconds of CPU the browser's processes spend on the fastest
//     bare read and on the page's way to its verdict, and so the ratio the
//     page could reach at best on this machine's cores (its CPU work spread
//     perfectly over every core).
//
// It prints each figure per round and, per size, the median ratio of the
// page's verdict to the fastest bare read with its range; native `inspect
// --json` on the same file is printed beside it. The wasm bundles' sizes
// (and gzipped) first.
//
//   node tests/e2e/bench.mjs            (from the repository root, after scripts/test's trunk build, wasm-opt on PATH: www/README.md; FELIX_STORAGE = a release felix-storage)
//   BENCH_SIZES_MIB=512,1024 BENCH_ROUNDS=3 node tests/e2e/bench.mjs
//   BENCH_SIZES_MIB=256 BENCH_RECORD_BYTES=92 BENCH_ROUNDS=1 BENCH_FOLDER_SEGMENTS=0 node tests/e2e/bench.mjs   (2.9 million records of a 64-byte payload)
//   BENCH_SIZES_MIB= BENCH_FOLDER_SEGMENTS=300 node tests/e2e/bench.mjs   (only the folder; BENCH_PROFILE=1 prints what the main thread ran in each busy run)
import { createServer } from 'node:http';
import { readFile, readdir, open, rm, mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { tmpdir, loadavg, cpus } from 'node:os';
import { join, extname, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { segmentHeader, recordHeader } from './felix-bytes.mjs';

const DIST = resolve(process.env.DIST_DIR ?? 'inspector-web/dist');
const CLI = resolve(process.env.FELIX_STORAGE ?? 'target/release/felix-storage');
const SIZES = (process.env.BENCH_SIZES_MIB ?? '512,1024').split(',').filter(Boolean).map(Number);
// Bytes per record (header included) of the large segments.
const RECORD_BYTES = Number(process.env.BENCH_RECORD_BYTES ?? 4096);
const FOLDER_SEGMENTS = Number(process.env.BENCH_FOLDER_SEGMENTS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROFILE = process.env.BENCH_PROFILE === '1';
const TRACE = process.env.BENCH_TRACE === '1';
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };

// The bare reads, in a worker of the page's own origin (the page's CSP allows no blob: worker).
const READER = `
const C = 4 << 20;
async function slice(f, count, ahead, size = C) {
  const q = []; let at = 0;
  const more = () => { while (q.length < ahead && at < f.size) { q.push(f.slice(at, Math.min(at + size, f.size)).arrayBuffer()); at += size; } };
  more();
  while (q.length) { const b = await q.shift(); more(); count(b.byteLength); }
}
async function stream(f, count) { const r = f.stream().getReader(); for (;;) { const { done, value } = await r.read(); if (done) break; count(value.byteLength); } }
async function byob(f, count) {
  const r = f.stream().getReader({ mode: 'byob' }); let buf = new ArrayBuffer(C);
  for (;;) { const { done, value } = await r.read(new Uint8Array(buf, 0, C)); if (done) break; count(value.byteLength); buf = value.buffer; }
}
function frs(f, count) { const fr = new FileReaderSync(); for (let at = 0; at < f.size; at += C) count(fr.readAsArrayBuffer(f.slice(at, Math.min(at + C, f.size))).byteLength); }
const WAYS = {
  'slice 4 MiB, 1 ahead': (f, c) => slice(f, c, 1),
  'slice 4 MiB, 2 ahead': (f, c) => slice(f, c, 2),
  'slice 8 MiB, 2 ahead': (f, c) => slice(f, c, 2, 8 << 20),
  'stream': stream,
  'stream BYOB 4 MiB': byob,
  'FileReaderSync 4 MiB': frs,
};
onmessage = async (e) => {
  if (e.data.way) {
    let n = 0; const t = performance.now();
    await WAYS[e.data.way](e.data.file, (k) => { n += k; });
    if (n !== e.data.file.size) throw new Error(e.data.way + ' read ' + n + ' of ' + e.data.file.size);
    return postMessage(performance.now() - t);
  }
  const f = e.data; const out = {};
  for (const [name, way] of Object.entries(WAYS)) {
    let n = 0; const t = performance.now();
    await way(f, (k) => { n += k; });
    if (n !== f.size) throw new Error(name + ' read ' + n + ' of ' + f.size);
    out[name] = performance.now() - t;
  }
  postMessage(out);
};`;

// A segment of RECORD_BYTES records (4 KiB), with rot in record 10 and a torn tail.
async function writeSegment(path, mib, recordBytes = RECORD_BYTES) {
  const f = await open(path, 'w');
  const header = segmentHeader();
  await f.write(header);
  const payload = Buffer.alloc(recordBytes - 28, 0x61);
  const records = Math.floor((mib * 1048576 - 32) / recordBytes);
  let batch = [];
  for (let o = 0; o < records; o++) {
    const h = recordHeader(o, o, payload);
    const p = o === 10 ? Buffer.from(payload).fill(0x62, Math.min(100, payload.length - 1), Math.min(101, payload.length)) : payload;
    batch.push(h, p);
    if (batch.length >= 65536) { await f.write(Buffer.concat(batch)); batch = []; }
  }
  if (batch.length) await f.write(Buffer.concat(batch));
  const size = (await f.stat()).size;
  await f.truncate(size - 7);
  await f.close();
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// CPU seconds (user + system) of every live process under this one: the
// browser and all its processes, so every thread that reads, scans or
// renders for the page. Sampled around the fastest bare read and around the
// page's verdict, it says how much work each is, and so how soon the
// verdict could come on this machine's cores at best.
const TICK = Number(execFileSync('getconf', ['CLK_TCK']).toString()) || 100;
async function browserCpu() {
  const stats = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      stats.push({ pid: Number(pid), ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / TICK });
    } catch { /* gone meanwhile */ }
  }
  const mine = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of stats) if (!mine.has(p.pid) && mine.has(p.ppid)) { mine.add(p.pid); grew = true; }
  }
  return stats.filter((p) => p.pid !== process.pid && mine.has(p.pid)).reduce((a, p) => a + p.cpu, 0);
}
const CORES = cpus().length;
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

const server = createServer(async (req, res) => {
  const p = new URL(req.url, 'http://x').pathname;
  if (p === '/__bench_reader.js') { res.writeHead(200, { 'content-type': 'text/javascript' }); return res.end(READER); }
  const file = join(DIST, p === '/' ? 'index.html' : p);
  try { res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }); res.end(await readFile(file)); }
  catch { res.writeHead(404); res.end(); }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--enable-precise-memory-info'],
});
const dir = await mkdtemp(join(tmpdir(), 'felix-bench-'));
for (const wasmFile of (await readdir(DIST)).filter((f) => f.endsWith('_bg.wasm')).sort()) {
  const wasm = await readFile(join(DIST, wasmFile));
  console.log(`${wasmFile}: ${(wasm.length / 1024).toFixed(0)} KiB, ${(gzipSync(wasm, { level: 9 }).length / 1024).toFixed(0)} KiB gzipped`);
}
console.log(`load average before: ${load()}`);

// One round on a fresh page: the bare reads, then the drop.
async function round(file, mib, lastOffset, cores) {
  const page = await browser.newPage();
  // The page gives the reader a worker of its own from 2 cores: both ways are measured, in turn.
  await page.addInitScript((n) => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => n }), cores);
  await page.goto(base);
  await page.waitForFunction(() => window.wasmBindings);
  await page.evaluate(() => { const i = document.createElement('input'); i.type = 'file'; i.id = 'bench-input'; i.hidden = true; document.body.append(i); });
  await page.setInputFiles('#bench-input', file);
  const reads = await page.evaluate(() => new Promise((ok, err) => {
    const w = new Worker('/__bench_reader.js');
    w.onmessage = (e) => { w.terminate(); ok(e.data); };
    w.onerror = (e) => err(new Error(e.message));
    w.postMessage(document.getElementById('bench-input').files[0]);
  }));
  // The fastest way once more, its CPU counted.
  const fastest = Object.entries(reads).sort((a, b) => a[1] - b[1])[0][0];
  const cpuRead0 = await browserCpu();
  const readMs = await page.evaluate((way) => new Promise((ok, err) => {
    const w = new Worker('/__bench_reader.js');
    w.onmessage = (e) => { w.terminate(); ok(e.data); };
    w.onerror = (e) => err(new Error(e.message));
    w.postMessage({ way, file: document.getElementById('bench-input').files[0] });
  }), fastest);
  const readCpu = { cpu: (await browserCpu()) - cpuRead0, wall: readMs / 1000, way: fastest };
  await page.waitForTimeout(300);
  let peakWasm = 0, peakJs = 0, done = false;
  const sampler = (async () => {
    while (!done) {
      const [w, j] = await page.evaluate(() => [window.wasmBindings.wasm_memory_bytes(), performance.memory?.usedJSHeapSize ?? 0]);
      peakWasm = Math.max(peakWasm, w); peakJs = Math.max(peakJs, j);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await page.evaluate((last) => {
    window.__longTasks = [];
    new PerformanceObserver((list) => window.__longTasks.push(...list.getEntries().map((e) => e.duration))).observe({ type: 'longtask' });
    document.querySelector('#file-input').addEventListener('change', () => { window.__t0 = performance.now(); }, { capture: true });
    // Verified: the overview shows the file's last offset (checked on every DOM change).
    new MutationObserver((_, obs) => {
      const cells = [...document.querySelectorAll('#overview tbody tr td.num')].map((c) => c.textContent);
      if (cells.includes(String(last))) { window.__tVerified = performance.now(); obs.disconnect(); }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  }, lastOffset);
  const cpuPage0 = await browserCpu();
  await page.setInputFiles('#file-input', file);
  await page.waitForFunction(() => window.__tVerified, null, { timeout: 600000, polling: 50 });
  const pageCpu = (await browserCpu()) - cpuPage0;
  await page.locator('#hash-timing').waitFor({ timeout: 600000 });
  await page.locator('#hex').waitFor({ timeout: 60000 });
  await page.waitForTimeout(300); // the detail views' first render
  done = true; await sampler;
  const [t0, tVerified, longest] = await page.evaluate(() => [window.__t0, window.__tVerified, Math.max(0, ...window.__longTasks)]);
  const text = await page.locator('#timing').textContent();
  const hashed = Number(/every file hashed after (\d+)/.exec(await page.locator('#hash-timing').textContent())?.[1]);
  const first = Number(/first finding after (\d+)/.exec(text)?.[1]);
  await page.close();
  return { reads, first, verified: tVerified - t0, hashed, peakWasm, peakJs, longest, readCpu, pageCpu };
}

// A shard folder of `segments` segments of 200 records each (the offsets run on from one to the next).
async function writeFolder(root, segments) {
  const dir = join(root, 'acme_default_bench_0');
  await mkdir(dir, { recursive: true });
  const payload = Buffer.alloc(100, 0x63);
  for (let s = 0, o = 0; s < segments; s++) {
    const header = segmentHeader(o);
    const parts = [header];
    for (let r = 0; r < 200; r++, o++) {
      const h = recordHeader(o, o, payload);
      parts.push(h, payload);
    }
    const base = String(o - 200).padStart(20, '0');
    await writeFile(join(dir, `${base}.log`), Buffer.concat(parts));
  }
  return dir;
}

// The folder dropped (picked) as one shard, on a page that says it has 2 cores:
// every main-thread task over 50 ms until the detail views have rendered.
async function folderRound(dir) {
  const page = await browser.newPage();
  await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => 2 }));
  await page.goto(base);
  await page.waitForFunction(() => window.wasmBindings);
  await page.evaluate(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => window.__longTasks.push(...list.getEntries().map((e) => [e.startTime, e.duration]))).observe({ type: 'longtask' });
    document.querySelector('#folder-input').addEventListener('change', () => { window.__t0 = performance.now(); }, { capture: true });
  });
  if (TRACE) await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing'] });
  const cdp = PROFILE ? await page.context().newCDPSession(page) : null;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  await page.setInputFiles('#folder-input', dir);
  // Waited for by a cheap check every 100 ms, not by a locator: Playwright's
  // locator polls visibility, which forces layouts in the page's own main
  // thread and would be counted in its tasks.
  await page.waitForFunction(() => document.getElementById('hash-timing') && document.getElementById('hex'), null, { timeout: 120000, polling: 100 });
  await page.waitForTimeout(1000); // the detail views' renders, and anything after
  if (cdp) printBusyRuns((await cdp.send('Profiler.stop')).profile);
  if (TRACE) printLongTaskParts(JSON.parse(await browser.stopTracing()).traceEvents);
  const [t0, tasks] = await page.evaluate(() => [window.__t0, window.__longTasks]);
  const hashed = Number(/every file hashed after (\d+)/.exec(await page.locator('#hash-timing').textContent())?.[1]);
  await page.close();
  return { tasks: tasks.filter(([at]) => at >= t0).map(([at, d]) => [at - t0, d]), hashed };
}

// BENCH_PROFILE=1: the main thread's sampled CPU profile of each folder
// round, cut into busy runs (samples with no idle gap over 2 ms); for every
// run over 40 ms, the functions with the most time in it (self, and with
// what they called). Build the page with names kept to read wasm frames
// (www/README.md).
function printBusyRuns(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n) => n.callFrame.functionName || `(${n.callFrame.url.split('/').pop() || 'anonymous'})`;
  const idle = (n) => n.callFrame.functionName === '(idle)';
  let at = 0, run = null;
  const runs = [];
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i];
    const n = nodes.get(id);
    if (idle(n)) { if (run && at - run.end > 2000) { runs.push(run); run = null; } return; }
    if (!run) run = { start: at, end: at, samples: [] };
    run.end = at; run.samples.push([id, profile.timeDeltas[i + 1] ?? 0]);
  });
  if (run) runs.push(run);
  for (const r of runs.filter((r) => r.end - r.start > 40000)) {
    const self = new Map(), total = new Map();
    for (const [id, dt] of r.samples) {
      self.set(name(nodes.get(id)), (self.get(name(nodes.get(id))) ?? 0) + dt);
      const seen = new Set();
      for (let x = id; x !== undefined; x = parent.get(x)) { const k = name(nodes.get(x)); if (!seen.has(k)) { seen.add(k); total.set(k, (total.get(k) ?? 0) + dt); } }
    }
    const top = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => `${(v / 1000).toFixed(1)} ms ${k}`).join('; ');
    console.log(`  busy run of ${((r.end - r.start) / 1000).toFixed(0)} ms at ${(r.start / 1000).toFixed(0)} ms\n    self: ${top(self)}\n    total: ${top(total)}`);
  }
}

// BENCH_TRACE=1: every main-thread task over 50 ms in a trace of each
// folder round, with the kinds of work in it (script, style, layout, paint)
// and their durations, the layouts' sizes and the scripts' sources.
function printLongTaskParts(events) {
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain' && events.some((t) => t.pid === e.pid && t.name === 'TracingStartedInBrowser' || t.pid === e.pid && t.name === 'FunctionCall'));
  const onMain = events.filter((e) => main && e.pid === main.pid && e.tid === main.tid && e.ph === 'X');
  for (const task of onMain.filter((e) => e.name === 'RunTask' && e.dur > 50000)) {
    const inside = onMain.filter((e) => e !== task && e.ts >= task.ts && e.ts + (e.dur ?? 0) <= task.ts + task.dur);
    const sums = new Map();
    for (const e of inside) sums.set(e.name, (sums.get(e.name) ?? 0) + (e.dur ?? 0));
    const parts = [...sums].filter(([, d]) => d > 2000).sort((a, b) => b[1] - a[1]).map(([n, d]) => `${n} ${(d / 1000).toFixed(1)} ms`).join(', ');
    const layouts = inside.filter((e) => e.name === 'Layout').map((e) => `${(e.dur / 1000).toFixed(1)} ms (${e.args?.beginData?.dirtyObjects}/${e.args?.beginData?.totalObjects} objects)`).join(', ');
    const styles = inside.filter((e) => e.name === 'UpdateLayoutTree').map((e) => `${(e.dur / 1000).toFixed(1)} ms (${e.args?.elementCount ?? '?'} elements)`).join(', ');
    console.log(`  task of ${(task.dur / 1000).toFixed(0)} ms: ${parts}\n    layouts: ${layouts}\n    styles: ${styles}`);
  }
}

if (FOLDER_SEGMENTS > 0) {
  const root = await mkdtemp(join(tmpdir(), 'felix-bench-folder-'));
  const folder = await writeFolder(root, FOLDER_SEGMENTS);
  for (let r = 0; r < ROUNDS; r++) {
    const x = await folderRound(folder);
    const list = x.tasks.map(([at, d]) => `${d.toFixed(0)} ms at ${at.toFixed(0)} ms`).join(', ');
    console.log(`${FOLDER_SEGMENTS}-segment folder, round ${r + 1} (load ${load()}): hashed ${x.hashed} ms; main-thread tasks over 50 ms: ${list || 'none'}`);
  }
  await rm(root, { recursive: true });
}

for (const mib of SIZES) {
  const file = join(dir, '00000000000000000000.log');
  await writeSegment(file, mib);
  let nativeS = Infinity, report;
  for (let i = 0; i < 3; i++) {
    const t0 = process.hrtime.bigint();
    try { report = execFileSync(CLI, ['inspect', '--json', file], { maxBuffer: 1 << 26 }); } catch (e) { if (e.status !== 1) throw e; report = e.stdout; }
    nativeS = Math.min(nativeS, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const lastOffset = JSON.parse(report).files[0].last_offset;
  console.log(`\n${mib} MiB (last offset ${lastOffset}); native inspect --json (best of 3): ${(mib / nativeS).toFixed(0)} MiB/s`);
  const MODES = { 'the scan reads (as on 1 core)': 1, 'a reader worker (2+ cores)': 2 };
  const ratios = Object.fromEntries(Object.keys(MODES).map((m) => [m, []])), fastestNames = [];
  const ceilings = Object.fromEntries(Object.keys(MODES).map((m) => [m, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const [mode, cores] of Object.entries(MODES)) {
      const x = await round(file, mib, lastOffset, cores);
      const rates = Object.fromEntries(Object.entries(x.reads).map(([k, ms]) => [k, mib / (ms / 1000)]));
      const [bestName, bestRate] = Object.entries(rates).sort((a, b) => b[1] - a[1])[0];
      const pageRate = mib / (x.verified / 1000);
      ratios[mode].push(pageRate / bestRate); fastestNames.push(bestName);
      console.log(`round ${r + 1}, ${mode} (load ${load()}): bare reads MiB/s: ${Object.entries(rates).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')}`);
      console.log(`  page: first finding ${x.first} ms, verified ${x.verified.toFixed(0)} ms = ${pageRate.toFixed(0)} MiB/s = ${(pageRate / bestRate).toFixed(2)}x the fastest bare read (${bestName}); hashed ${x.hashed} ms; `
        + `peak page wasm ${(x.peakWasm / 1048576).toFixed(0)} MiB, JS heap ${(x.peakJs / 1048576).toFixed(0)} MiB; longest main-thread task ${x.longest ? `${x.longest.toFixed(0)} ms` : 'none over 50 ms (the Long Tasks API reports no shorter ones)'}`);
      // The verdict needs pageCpu CPU-seconds of the browser; on CORES cores it cannot come sooner than pageCpu / CORES.
      const ceiling = x.readCpu.wall / Math.max(x.readCpu.wall, x.pageCpu / CORES);
      ceilings[mode].push(ceiling);
      console.log(`  CPU (the browser's processes, user + system): the bare read (${x.readCpu.way}) ${x.readCpu.cpu.toFixed(2)} s in ${x.readCpu.wall.toFixed(2)} s, `
        + `${(x.readCpu.cpu / x.readCpu.wall).toFixed(2)} cores busy; the page to its verdict ${x.pageCpu.toFixed(2)} s in ${(x.verified / 1000).toFixed(2)} s; `
        + `on ${CORES} cores that work cannot finish under ${(x.pageCpu / CORES).toFixed(2)} s: at best ${ceiling.toFixed(2)}x that bare read`);
    }
  }
  for (const [mode, rs] of Object.entries(ratios)) {
    console.log(`${mib} MiB, ${mode}: page verdict / fastest bare read: median ${median(rs).toFixed(2)}x (range ${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)}, ${ROUNDS} rounds); `
      + `the ceiling its CPU allows on ${CORES} cores: median ${median(ceilings[mode]).toFixed(2)}x`);
  }
  console.log(`fastest bare reads: ${[...new Set(fastestNames)].join(', ')}`);
  await rm(file);
}
console.log(`load average after: ${load()}`);
await browser.close();
server.close();
await rm(dir, { recursive: true });
