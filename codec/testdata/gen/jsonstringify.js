// Usage: node codec/testdata/gen/jsonstringify.js codec/testdata/jsonstringify.tsv
// Writes "input\texpected" lines: expected = JSON.stringify(JSON.parse(input)).
const fs = require('fs');
let seed = 12345;
function rnd() { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x80000000; }
function ri(n) { return Math.floor(rnd() * n); }
const out = [];
function add(s) {
  let v;
  try { v = JSON.parse(s); } catch (e) { return; }
  const r = JSON.stringify(v);
  if (r.includes('null') && !s.includes('null')) return; // Infinity: refused by docs/format.md#json-text
  out.push(s + '\t' + r);
}
// Numbers: random float64 bit patterns.
const buf = new DataView(new ArrayBuffer(8));
for (let i = 0; i < 1500; i++) {
  buf.setUint32(0, ri(0x100000000)); buf.setUint32(4, ri(0x100000000));
  const f = buf.getFloat64(0);
  if (!isFinite(f)) continue;
  add(String(f));                 // JS shortest form, e.g. 1.5e+300
  add(f.toExponential(ri(20)));   // another spelling of a nearby value
}
// Decimal strings of every shape.
const digits = n => { let s = String(1 + ri(9)); for (let i = 1; i < n; i++) s += ri(10); return s; };
for (let i = 0; i < 1500; i++) {
  const sign = ri(3) === 0 ? '-' : '';
  const intPart = ri(4) === 0 ? '0' : digits(1 + ri(25));
  const frac = ri(2) ? '.' + digits(1 + ri(20)) : '';
  const exp = ri(2) ? (ri(2) ? 'e' : 'E') + ['', '+', '-'][ri(3)] + String(ri(330)) : '';
  add(sign + intPart + frac + exp);
}
// Boundaries.
for (const s of ['1e21', '9.999999999999999e20', '999999999999999999999', '1e-7', '9.999999999999999e-8', '0.000001', '0.0000009999999999999999',
  '9007199254740991', '9007199254740992', '9007199254740993', '-9007199254740993', '9223372036854775807', '9223372036854775808', '-9223372036854775809',
  '18446744073709551615', '18446744073709551616', '4.9e-324', '2.2250738585072014e-308', '2.2250738585072011e-308', '1.7976931348623157e308', '1.7976931348623158e308',
  '0.1e1', '100e-2', '123.456e3', '-0', '-0e10', '0e-10', '1e0', '1E+0', '5e-1', '0.5e1']) add(s);
for (let e = -330; e <= 310; e++) { add('1e' + e); add('-3.7e' + e); }
for (let k = 0; k <= 64; k++) { const p = 2n ** BigInt(k); add(String(p)); add(String(p - 1n)); add(String(p + 1n)); add('-' + String(p)); }
// Strings: random code units, escaped and raw.
const pool = [0x00, 0x01, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1f, 0x20, 0x22, 0x26, 0x27, 0x2f, 0x3c, 0x3e, 0x41, 0x5c, 0x7f, 0x80, 0xa0, 0xe9, 0x2028, 0x2029, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xfeff, 0xfffd, 0xffff];
for (let i = 0; i < 800; i++) {
  let units = [];
  const n = 1 + ri(8);
  for (let j = 0; j < n; j++) units.push(ri(4) ? pool[ri(pool.length)] : ri(0x10000));
  let s = '"';
  for (const u of units) {
    const raw = u >= 0x20 && u !== 0x22 && u !== 0x5c && (u < 0xd800 || u > 0xdfff);
    if (raw && ri(2)) s += String.fromCharCode(u);
    else if (u === 0x2f && ri(2)) s += '\\/';
    else { const h = u.toString(16).padStart(4, '0'); s += '\\u' + (ri(2) ? h : h.toUpperCase()); }
  }
  s += '"';
  add(s);
}
fs.writeFileSync(process.argv[2], '# input<TAB>JSON.stringify(JSON.parse(input)), written by Node ' + process.version + '\n' + out.join('\n') + '\n');
console.log(out.length, 'cases');
