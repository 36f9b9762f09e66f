// Writes the import/export fixtures of codec/testdata/fixtures with Node's
// JSON.stringify, the oracle of docs/format.md#json-text:
//
//	node codec/testdata/gen/fixtures.js codec/testdata/fixtures
const fs = require('fs');
const out = process.argv[2];
function write(name, header, events) {
  const lines = [JSON.stringify(header)];
  events.forEach((e, i) => {
    const ev = { type: e[0], seq: i, time: e[2] === undefined ? 1783352209707 + i : e[2], data: e[1] };
    if (e[3]) Object.assign(ev, e[3]);
    lines.push(JSON.stringify(ev));
  });
  fs.writeFileSync(out + '/' + name, lines.join('\n') + '\n');
}
const append = { surfaceOp: 'append' };
const src = (...s) => ({ sourceEventSeqs: s, surfaceOp: 'append' });
const sha = 'a3f1c2d4e5b6978800112233445566778899aabbccddeeff0011223344556677';
const toolsR = [
  { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'integer', minimum: 0 } }, required: ['path'], additionalProperties: false } },
  { name: 'bash', description: 'Run a command <in a sandbox> & return output', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
];
const headerR = { config: { provider: 'deepseek', model: 'deepseek-v4-flash', temperature: 0.7, maxTokens: 8192, stop: [] }, system: 'You are a coding assistant.\nBe brief & exact: <answer> only.', tools: toolsR };

// 1. R era: every event type, reasons initial/resume/change.
write('r-era.jsonl', { type: 'session', version: 0, id: 'fx-r-era', createdAt: 1783352209707, cwd: '/home/dev/project' }, [
  ['request/header', { header: headerR, reason: 'initial' }],
  ['turn/start', { turn: 1, trigger: { kind: 'message', source: { kind: 'user' } } }],
  ['user/message', { content: [{ type: 'text', text: 'Read a.txt — café ☕' }], source: { kind: 'user' } }, undefined, append],
  ['step/start', { turn: 1, step: 1 }],
  ['request/digest', { turn: 1, step: 1, sha256: sha }],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-start', index: 0, blockType: 'reasoning' } }],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: 'The user wants a.txt.' } }],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'The user wants a.txt.' } } }],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-start', index: 1, blockType: 'tool-call' } }],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'tool-call-delta', index: 1, id: 'call_1', name: 'read', argumentsDelta: '{"path":"a.txt"}' } }],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'block-end', index: 1, block: { type: 'tool-call', id: 'call_1', name: 'read', arguments: '{"path":"a.txt"}' } } }],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'usage', usage: { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 1024, reasoningTokens: 12 } } }],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'tool-calls' }, replayState: { reasoningContent: 'The user wants a.txt.', v: 2 } } }],
  ['assistant/message', { turn: 1, step: 1, content: [{ type: 'reasoning', text: 'The user wants a.txt.' }, { type: 'tool-call', id: 'call_1', name: 'read', arguments: '{"path":"a.txt"}' }], provenance: { provider: 'deepseek', model: 'deepseek-v4-flash', replayState: { reasoningContent: 'The user wants a.txt.', v: 2 } }, usage: { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 1024, reasoningTokens: 12 } }, undefined, src(5, 6, 7, 8, 9, 10, 11, 12)],
  ['tool/call', { turn: 1, step: 1, callId: 'call_1', name: 'read', arguments: '{"path":"a.txt"}' }],
  ['tool/result', { turn: 1, step: 1, callId: 'call_1', content: [{ type: 'text', text: 'hello\n\tworld "quoted" \\ backslash' }], isError: false, meta: { bytes: 28, truncated: false } }, undefined, src(14)],
  ['step/end', { turn: 1, step: 1 }],
  ['step/start', { turn: 1, step: 2 }],
  ['assistant/chunk', { turn: 1, step: 2, chunk: { type: 'block-start', index: 0, blockType: 'text' } }],
  ['assistant/chunk', { turn: 1, step: 2, chunk: { type: 'text-delta', index: 0, text: 'It says hello.' } }],
  ['assistant/chunk', { turn: 1, step: 2, chunk: { type: 'block-end', index: 0, block: { type: 'text', text: 'It says hello.' } } }],
  ['assistant/chunk', { turn: 1, step: 2, chunk: { type: 'finish', reason: { kind: 'stop' } } }],
  ['assistant/message', { turn: 1, step: 2, content: [{ type: 'text', text: 'It says hello.' }], provenance: { provider: 'deepseek', model: 'deepseek-v4-flash' }, usage: { inputTokens: 1300, outputTokens: 5, cacheReadTokens: 1200, cacheWriteTokens: 64 } }, undefined, src(18, 19, 20, 21)],
  ['step/end', { turn: 1, step: 2 }],
  ['turn/end', { turn: 1, reason: { kind: 'completed' } }],
  ['request/header', { header: headerR, reason: 'resume' }],
  ['turn/start', { turn: 2, trigger: { kind: 'injection', source: { kind: 'plugin', plugin: 'scheduler' } } }],
  ['context/message', { content: [{ type: 'text', text: 'The build is green.' }], source: { kind: 'plugin', plugin: 'ci' }, envelope: 'raw', meta: { run: 'r-17', checks: ['lint', 'test'] } }, undefined, append],
  ['steering/message', { turn: 2, content: [{ type: 'text', text: 'Also summarise.' }], source: { kind: 'user' } }, undefined, append],
  ['request/header', { header: { config: { provider: 'deepseek', model: 'deepseek-v4-pro', temperature: 0.7, maxTokens: 8192, stop: [] }, system: headerR.system, tools: toolsR }, reason: 'change' }],
  ['step/start', { turn: 2, step: 1 }],
  ['assistant/chunk', { turn: 2, step: 1, chunk: { type: 'text-delta', index: 0, text: 'Green build; a.txt says hello.' } }],
  ['assistant/message', { turn: 2, step: 1, content: [{ type: 'text', text: 'Green build; a.txt says hello.' }], provenance: { provider: 'deepseek', model: 'deepseek-v4-pro' }, usage: { inputTokens: 1500, outputTokens: 9 } }, undefined, src(31)],
  ['step/end', { turn: 2, step: 1 }],
  ['compact/start', { turn: 2 }],
  ['compact/summary', { summary: [{ type: 'text', text: 'User read a.txt (hello); build green.' }], shadowedRange: { start: 2, end: 32 }, shadowedSeqs: [2, 13, 15, 22, 27, 28, 32], shadowedTokenCount: 2710, provider: 'deepseek', model: 'deepseek-v4-flash', maxTokens: 2048 }],
  ['context/message', { content: [{ type: 'text', text: 'User read a.txt (hello); build green.' }], source: { kind: 'plugin', plugin: 'compact' } }, undefined, { sourceEventSeqs: [2, 13, 15, 22, 27, 28, 32, 35], surfaceOp: { op: 'replace', start: 2, end: 32 } }],
  ['compact/end', { turn: 2 }],
  ['turn/end', { turn: 2, reason: { kind: 'completed' } }],
  ['prompt/blocked', { content: [{ type: 'text', text: 'rm -rf /' }], source: { kind: 'user' }, reason: 'blocked by policy hook' }],
  ['turn/start', { turn: 3 }],
  ['user/message', { content: [{ type: 'text', text: 'Try again.' }], source: { kind: 'user' } }, undefined, append],
  ['step/start', { turn: 3, step: 1 }],
  ['assistant/chunk', { turn: 3, step: 1, chunk: { type: 'finish', reason: { kind: 'error' } } }],
  ['step/end', { turn: 3, step: 1 }],
  ['turn/end', { turn: 3, reason: { kind: 'error', step: 1, message: 'provider returned 429', code: 'rate_limited' } }],
  ['turn/start', { turn: 4 }],
  ['user/message', { content: [{ type: 'text', text: 'Stop.' }], source: { kind: 'user' } }, undefined, append],
  ['turn/end', { turn: 4, reason: { kind: 'aborted', reason: 'user cancelled' } }],
  ['turn/start', { turn: 5 }],
  ['user/message', { content: [{ type: 'text', text: 'Anything?' }], source: { kind: 'user' } }, undefined, append],
  ['step/start', { turn: 5, step: 1 }],
  ['assistant/message', { turn: 5, step: 1, content: [], provenance: { provider: 'deepseek', model: 'deepseek-v4-pro' } }, undefined, { sourceEventSeqs: [], surfaceOp: 'append' }],
  ['step/end', { turn: 5, step: 1 }],
  ['turn/end', { turn: 5, reason: { kind: 'max-tokens' } }],
  ['turn/start', { turn: 6 }],
  ['turn/end', { turn: 6, reason: { kind: 'rejected', reason: 'over budget' } }],
  ['turn/start', { turn: 7 }],
  ['turn/end', { turn: 7, reason: { kind: 'interrupted' } }],
  ['turn/start', { turn: 8 }],
  ['turn/end', { turn: 8, reason: { kind: 'disposed' } }],
]);

// 2. Seed era: no provider, deltas, reasons initial/resume/fallback.
const headerSeed = { config: { model: 'deepseek-chat', temperature: 0, stop: ['</done>'] }, system: 'Line one\nLine two\nLine three', tools: [{ name: 'grep', description: 'Search', parameters: { type: 'object', properties: { pattern: { type: 'string' } } } }], messagePrefix: [{ role: 'user', content: [{ type: 'text', text: '<system-reminder>\nWorkspace rules apply.\n</system-reminder>' }] }] };
write('seed-era.jsonl', { type: 'session', version: 0, id: 'fx-seed-era', createdAt: 1700000000000 }, [
  ['request/header', { header: headerSeed, reason: 'initial' }],
  ['turn/start', { turn: 1 }],
  ['user/message', { content: [{ type: 'text', text: 'Find TODOs.' }], source: { kind: 'user' } }, 0, append],
  ['step/start', { turn: 1, step: 1 }, 0],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'tool-call-delta', index: 0, id: 'g1', argumentsDelta: '{"pattern":"TODO"}' } }, 0],
  ['assistant/message', { turn: 1, step: 1, content: [{ type: 'tool-call', id: 'g1', name: 'grep', arguments: '{"pattern":"TODO"}' }] }, 0, append],
  ['tool/call', { turn: 1, step: 1, callId: 'g1', name: 'grep', arguments: '{"pattern":"TODO"}' }, 0],
  ['tool/result', { turn: 1, step: 1, callId: 'g1', content: [{ type: 'text', text: 'permission denied' }], isError: true, error: { name: 'PermissionError', code: 'EACCES' } }, 0, append],
  ['step/end', { turn: 1, step: 1 }, 0],
  ['request/header-delta', { system: { keepStart: 1, keepEnd: 1, insert: ['Inserted line'] } }, 0],
  ['request/header-delta', { tools: { removed: ['grep'], changed: [], added: [{ name: 'glob', description: 'List files', parameters: { type: 'object' } }] } }, 0],
  ['request/header-delta', { config: { model: 'deepseek-reasoner', temperature: 0.3 } }, 0],
  ['request/header-delta', { messagePrefix: [] }, 0],
  ['step/start', { turn: 1, step: 2 }, 0],
  ['assistant/message', { turn: 1, step: 2, content: [{ type: 'text', text: 'No access.' }], usage: { inputTokens: 10, outputTokens: 3 } }, 0, append],
  ['step/end', { turn: 1, step: 2 }, 0],
  ['turn/end', { turn: 1, reason: { kind: 'completed' } }, 0],
  ['request/header', { header: { config: { model: 'deepseek-reasoner', temperature: 0.3, stop: ['</done>'] }, system: 'Line one\nInserted line\nLine three', tools: [{ name: 'glob', description: 'List files', parameters: { type: 'object' } }] }, reason: 'resume' }, 5],
  ['request/header', { header: { config: { model: 'deepseek-reasoner', temperature: 0.3, stop: ['</done>'] }, tools: [{ name: 'glob', description: 'List files', parameters: { type: 'object' } }, { name: 'read', description: 'Read', parameters: { type: 'object' } }] }, reason: 'fallback' }, 5],
  ['turn/start', { turn: 2 }, 6],
  ['user/message', { content: [{ type: 'text', text: 'Compact please.' }], source: { kind: 'user' } }, 6, append],
  ['compact/start', { turn: 2 }, 6],
  ['compact/end', { turn: 2, error: { name: 'CompactError', message: 'summary too long' } }, 7],
  ['turn/end', { turn: 2, reason: { kind: 'completed' } }, 7],
]);

// 3. Opaque values, unknown keys, unknown types, missing optional keys.
write('opaque.jsonl', { type: 'session', version: 0, id: 'fx-opaque', title: { text: 'x', 'z-order': [3, 1, 2], a: null }, createdAt: 5, cwd: '/w', labels: [] }, [
  ['permission/preset', { preset: 'workspace-write' }],
  ['todo/write', { todos: [{ content: 'watch the kettle', status: 'in_progress', id: 3 }, { status: 'done', content: 'tea' }] }],
  ['hook/invoked', { z: 1, a: { y: [], b: {} }, '10': 'ten', '2': 'two', nested: { deeper: { deepest: [[[{}]]] } } }],
  ['turn/start', { note: 'unknown key first', turn: 1, extra: { b: 2, a: 1 } }],
  ['user/message', { source: { kind: 'user', via: 'cli' }, content: [{ type: 'text', text: 'look', cache_control: { type: 'ephemeral' } }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }, { type: 'document', title: 'spec', pages: 3 }], tags: ['a'] }, undefined, append],
  ['step/start', { step: 1, turn: 1 }],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'citation', url: 'https://example.com/?a=1&b=<2>' } }],
  ['assistant/chunk', { turn: 1, step: 1, chunk: { type: 'text-delta', index: 0, text: 'ok', logprob: -0.25 } }],
  ['assistant/message', { step: 1, turn: 1, content: [{ type: 'text', text: 'ok' }, { type: 'server-tool-use', id: 'st1', input: { q: 'x' } }], future: true }, undefined, append],
  ['tool/result', { turn: 1, step: 1, callId: 'c0', content: [{ type: 'tool-result', toolCallId: 'inner', content: [{ type: 'text', text: 'nested' }, { type: 'image', url: 'u' }] }, { type: 'tool-result', toolCallId: 'inner2', content: [], isError: true }], isError: false }, undefined, append],
  ['step/end', { turn: 1, step: 1, durationMs: 12.5 }],
  ['approval/asked', { id: '9ba4bf87', toolName: 'bash', reason: 'bash requires approval' }],
  ['context/message', { content: [{ type: 'text', text: 'ctx' }], source: { kind: 'custom-kind', extra: [1] } }, undefined, append],
  ['turn/end', { reason: { kind: 'completed', detail: { a: [] } }, turn: 1 }],
  ['session/renamed', {}],
]);

// 4. Text and numbers.
write('text-and-numbers.jsonl', { type: 'session', version: 0, id: 'fx-text-é😀', createdAt: 1783352209707.5, cwd: '/home/dév/プロジェクト' }, [
  ['turn/start', { turn: 1 }, 0.5],
  ['user/message', { content: [
      { type: 'text', text: 'Unicode: héllo 世界 😀 e\u0301 \u00a0nbsp \ufeffbom' },
      { type: 'text', text: 'HTML stays raw: <script>alert("x&y")</script> & &amp;' },
      { type: 'text', text: 'Separators: \u2028 and \u2029 raw' },
      { type: 'text', text: 'Controls: \u0000 \u0001 \u0007 \b \t \n \u000b \f \r \u001b \u001f \u007f' },
      { type: 'text', text: 'Lone surrogates: \ud800 \udfff x\ud83dy and pair \ud83d\ude00' },
      { type: 'text', text: 'Slashes / \\ and "quotes"' },
    ], source: { kind: 'user' } }, 1e21, append],
  ['hook/numbers', { ints: [0, -1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, -32, -33, -129, -32769, -2147483649, 9007199254740991, 9007199254740992, -9007199254740992],
      big: [1e21, 123456789012345680000, 1e300, -1e21, 9223372036854776000, 18446744073709552000],
      fractions: [0.1, 0.2, 0.30000000000000004, 1e-7, 0.000001, 5e-324, 1.7976931348623157e308, -1.5e-10, 2.5, 1.0000000000000002],
      mixed: { temperature: 0.7, topP: 1, penalty: -0.5 } }, 1.5e-7],
  ['turn/end', { turn: 1, reason: { kind: 'completed' } }, 9007199254740992],
]);

// 5. An opaque block whose "content" is an array of non-blocks (docs/format.md#content-blocks:
// any other block type is opaque JSON, kept byte-exact).
write('opaque-block-content.jsonl', { type: 'session', version: 0, id: 'fx-opaque-block-content', createdAt: 5 }, [
  ['turn/start', { turn: 1 }],
  ['user/message', { content: [{ type: 'document', title: 'spec', content: [{ z: 1 }], pages: 3 }, { type: 'table', content: [['a', 'b'], [1, 2]] }], source: { kind: 'user' } }, undefined, append],
  ['turn/end', { turn: 1, reason: { kind: 'completed' } }],
]);
