// Usage: node codec/testdata/gen/jsonparse.js codec/testdata/jsonparse.tsv
// Writes "input\tresult" lines for mutated JSON texts: result is
// JSON.stringify(JSON.parse(input)), or "!" when JSON.parse throws.
const fs = require('fs');
let seed = 777;
function rnd() { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x80000000; }
function ri(n) { return Math.floor(rnd() * n); }
const bases = ['{"a":[1,2.5,-3e2,true,false,null],"b":{"c":"d\\n\\u0041"}}', '[{"x":{}},[],[[]],"",0]', '{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}',
  '"\\ud83d\\ude00 \\" \\\\ \\/"', '-0.5e-3', '[1,-1,0.1,1E+2,1e-2]', '{"k":"v","k2":[{"n":null}]}', ' \t\n[ 1 , { "a" : "b" } ]\r\n '];
const alphabet = '{}[]:,"\\ \t\n\r0123456789-+.eEabfnrtu/xtruefalsenull'.split('').concat(['true', 'false', 'null', '\\u', '\\ud800', '1e', '00', '0x', '"a"', ',,', '::']);
const out = [];
const seen = new Set();
for (let i = 0; i < 4000; i++) {
  let s = bases[ri(bases.length)];
  const edits = 1 + ri(3);
  for (let e = 0; e < edits; e++) {
    const p = ri(s.length + 1);
    const op = ri(3);
    const c = alphabet[ri(alphabet.length)];
    if (op === 0) s = s.slice(0, p) + c + s.slice(p);
    else if (op === 1) s = s.slice(0, p) + s.slice(p + 1);
    else s = s.slice(0, p) + c + s.slice(p + 1);
  }
  if (s.includes('\n') || s.includes('\t') || seen.has(s)) continue; // one case per line
  seen.add(s);
  let r;
  // Integer-like keys: JavaScript moves them first; docs/format.md#json-text keeps the
  // stored order for such non-canonical input, so they are left out.
  let intKey = false;
  try { r = JSON.stringify(JSON.parse(s, function (k, v) { if (/^(0|[1-9][0-9]*)$/.test(k) && !Array.isArray(this)) intKey = true; return v; })); } catch (e) { r = '!'; }
  if (intKey) continue;
  out.push(s + '\t' + r);
}
fs.writeFileSync(process.argv[2], '# input<TAB>JSON.stringify(JSON.parse(input)) or ! when JSON.parse throws, written by Node ' + process.version + '\n' + out.join('\n') + '\n');
console.log(out.length, 'cases', out.filter(l => l.endsWith('\t!')).length, 'refused');
