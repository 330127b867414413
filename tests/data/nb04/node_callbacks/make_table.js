// A config save on a loaded Node.js event loop (libuv), written as a table in the
// published layout: sections, event_loop_ms, duration_ms, yields (+ hog_ms, ignored
// by the reader). Each section is saved with callback fs calls (mkdir, open with
// O_SYNC, write, close), then the tree is renamed into place; every callback is one
// wait for the loop (one "yield"). A hog re-queues itself with setImmediate and
// busy-spins hog_ms per loop iteration; a probe measures the mean iteration time in
// a window just before and just after each save. Everything lives in one temp dir,
// removed at the end.
//   usage: node make_table.js > table.csv
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const SECTIONS = [3, 6, 12, 24];
const HOG_MS = [2, 5, 10, 20];
const WINDOW = 20; // loop iterations per lag window (before and after)

function spin(ms) {
  const end = process.hrtime.bigint() + BigInt(Math.round(ms * 1e6));
  while (process.hrtime.bigint() < end) { /* busy */ }
}
const now = () => Number(process.hrtime.bigint()) / 1e6;

function loopLag(n, cb) { // mean time of n loop iterations (setImmediate round trips)
  const t0 = now();
  let k = 0;
  const step = () => { if (++k >= n) cb((now() - t0) / n); else setImmediate(step); };
  setImmediate(step);
}

function save(root, sections, cb) { // callback save; cb(err, yields)
  const tmp = path.join(root, 'config.' + Math.random().toString(36).slice(2));
  let yields = 0;
  const ops = [(next) => fs.mkdir(tmp, next)];
  for (let i = 0; i < sections; i++) {
    const dir = i % 4 === 3 ? path.join(tmp, 'roles') : tmp;
    const file = path.join(dir, `section_${String(i).padStart(3, '0')}.yml`);
    const body = Buffer.from(`# section ${i}\n` + 'key: value\n'.repeat(180));
    let fd = null;
    ops.push((next) => fs.mkdir(dir, { recursive: true }, next));
    ops.push((next) => fs.open(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY |
                                     fs.constants.O_SYNC, 0o644, (err, f) => { fd = f; next(err); }));
    ops.push((next) => fs.write(fd, body, (err) => next(err)));
    ops.push((next) => fs.close(fd, next));
  }
  const final = path.join(root, 'config');
  ops.push((next) => fs.rename(tmp, final, next));
  const run = (i) => {
    if (i === ops.length) { fs.rmSync(final, { recursive: true, force: true }); cb(null, yields); return; }
    ops[i]((err) => { yields++; if (err) cb(err); else run(i + 1); });
  };
  run(0);
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'nb04-node-'));
const plan = [];
for (const s of SECTIONS) for (const h of HOG_MS) plan.push([s, h]);
const rows = ['sections,event_loop_ms,duration_ms,yields,hog_ms'];
let hogMs = 0;
let running = true;
const hog = () => { if (!running) return; spin(hogMs); setImmediate(hog); };
setImmediate(hog);
const next = (k) => {
  if (k === plan.length) {
    running = false;
    fs.rmSync(root, { recursive: true, force: true });
    process.stdout.write(`# made by: node make_table.js (node ${process.version}, ${os.cpus().length} cpus, ` +
      `${os.type()} ${os.release()}, ${new Date().toISOString()})\n` + rows.join('\n') + '\n');
    return;
  }
  const [s, h] = plan[k];
  hogMs = h;
  loopLag(WINDOW, (before) => {
    const t0 = now();
    save(root, s, (err, yields) => {
      if (err) throw err;
      const dur = now() - t0;
      loopLag(WINDOW, (after) => {
        rows.push([s, ((before + after) / 2).toFixed(3), dur.toFixed(3), yields, h].join(','));
        next(k + 1);
      });
    });
  });
};
next(0);
