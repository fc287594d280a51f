// Browser benchmark (a script, not a timed test): drop-to-first-finding and
// drop-to-verified for 64 MiB and 1 GiB .log files in headless Chromium, as a
// ratio to native `felix-storage inspect` on the same file in the same run;
// peak page memory (the page's wasm and JS heap; the scan itself runs in a
// worker whose memory is bounded by its chunk size and record-row cap); the
// longest main-thread task during the scan; the wasm bundles gzipped.
//
//   node tests/e2e/bench.mjs            (from the repository root, after scripts/test built dist/)
//   BENCH_SIZES_MIB=64 node tests/e2e/bench.mjs
import { createServer } from 'node:http';
import { readFile, readdir, open, rm, mkdtemp } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { gzipSync, crc32 } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join, extname, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const DIST = resolve(process.env.DIST_DIR ?? 'inspector-web/dist');
const CLI = resolve(process.env.FELIX_STORAGE ?? 'target/release/felix-storage');
const SIZES = (process.env.BENCH_SIZES_MIB ?? '64,1024').split(',').map(Number);
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };

// A segment of 4 KiB records, with rot in record 10 and a torn tail.
async function writeSegment(path, mib) {
  const f = await open(path, 'w');
  const header = Buffer.alloc(32);
  header.write('FLSG', 0); header.writeUInt16BE(2, 4); header.writeBigUInt64BE(0n, 8); header.writeBigUInt64BE(1n, 16);
  header.writeUInt32BE(crc32(header.subarray(0, 24)), 24);
  await f.write(header);
  const payload = Buffer.alloc(4096 - 28, 0x61);
  const records = Math.floor((mib * 1048576 - 32) / 4096);
  let batch = [];
  for (let o = 0; o < records; o++) {
    const h = Buffer.alloc(28);
    h.writeUInt32BE(payload.length, 0); h.writeBigUInt64BE(BigInt(o), 4); h.writeBigUInt64BE(BigInt(o), 12);
    h.writeUInt32BE(crc32(h.subarray(0, 20)), 20);
    h.writeUInt32BE(crc32(payload, crc32(h.subarray(0, 24))), 24);
    const p = o === 10 ? Buffer.from(payload).fill(0x62, 100, 101) : payload;
    batch.push(h, p);
    if (batch.length >= 512) { await f.write(Buffer.concat(batch)); batch = []; }
  }
  if (batch.length) await f.write(Buffer.concat(batch));
  const size = (await f.stat()).size;
  await f.truncate(size - 7);
  await f.close();
}

const server = createServer(async (req, res) => {
  const p = new URL(req.url, 'http://x').pathname;
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
for (const wasmFile of (await readdir(DIST)).filter((f) => f.endsWith('_bg.wasm'))) {
  const wasm = await readFile(join(DIST, wasmFile));
  console.log(`${wasmFile}: ${(wasm.length / 1024).toFixed(0)} KiB, ${(gzipSync(wasm, { level: 9 }).length / 1024).toFixed(0)} KiB gzipped (target <= 500 KiB)`);
}
console.log('size_MiB  native_MiB/s  browser_MiB/s  ratio  first_finding_ms  verified_ms  peak_page_wasm_MiB  peak_page_js_heap_MiB  longest_main_thread_task_ms');
for (const mib of SIZES) {
  const file = join(dir, '00000000000000000000.log');
  await writeSegment(file, mib);
  const t0 = process.hrtime.bigint();
  try { execFileSync(CLI, ['inspect', '--json', file], { maxBuffer: 1 << 26 }); } catch (e) { if (e.status !== 1) throw e; }
  const nativeS = Number(process.hrtime.bigint() - t0) / 1e9;
  const page = await browser.newPage();
  await page.goto(base);
  await page.waitForFunction(() => window.wasmBindings);
  let peakWasm = 0, peakJs = 0, done = false;
  const sampler = (async () => {
    while (!done) {
      const [w, j] = await page.evaluate(() => [window.wasmBindings.wasm_memory_bytes(), performance.memory?.usedJSHeapSize ?? 0]);
      peakWasm = Math.max(peakWasm, w); peakJs = Math.max(peakJs, j);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await page.evaluate(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => window.__longTasks.push(...list.getEntries().map((e) => e.duration))).observe({ type: 'longtask' });
  });
  await page.setInputFiles('#file-input', file);
  await page.locator('#timing').waitFor({ timeout: 600000 });
  await page.waitForFunction(() => /all verified/.test(document.querySelector('#timing')?.textContent ?? ''), null, { timeout: 600000 });
  done = true; await sampler;
  const text = await page.locator('#timing').textContent();
  const longest = await page.evaluate(() => Math.max(0, ...window.__longTasks));
  const first = Number(/first finding after (\d+)/.exec(text)?.[1]);
  const all = Number(/all verified after (\d+)/.exec(text)?.[1]);
  const real = mib;
  const browserRate = real / (all / 1000), nativeRate = real / nativeS;
  console.log(`${String(mib).padStart(8)}  ${nativeRate.toFixed(0).padStart(12)}  ${browserRate.toFixed(0).padStart(13)}  ${(browserRate / nativeRate).toFixed(2).padStart(5)}  ${String(first).padStart(16)}  ${String(all).padStart(11)}  ${(peakWasm / 1048576).toFixed(0).padStart(18)}  ${(peakJs / 1048576).toFixed(0).padStart(21)}  ${longest.toFixed(0).padStart(27)}`);
  await page.close();
  await rm(file);
}
await browser.close();
server.close();
await rm(dir, { recursive: true });
