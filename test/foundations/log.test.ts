// The terminal form of the log (kassa start on a TTY): pino's JSON lines made readable, each field once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prettyLine } from '../../src/log.ts';

describe('prettyLine', () => {
  it('prints time, level, message, then each other field once as key=value', () => {
    const line = JSON.stringify({
      level: 30,
      time: '2026-11-27T04:05:06.789Z',
      service: 'kassa',
      requestId: 'abc',
      storeId: 'f00',
      msg: 'request',
      method: 'GET',
      path: '/v1/payments',
      status: 200,
      ms: 1.5,
      note: 'two words',
    });
    assert.equal(prettyLine(line), '04:05:06.789 INFO  request  requestId=abc storeId=f00 method=GET path=/v1/payments status=200 ms=1.5 note="two words"\n');
  });

  it("indents an error's stack below its line, colours the level on request, and passes what is not JSON through", () => {
    const line = JSON.stringify({ level: 50, time: '2026-11-27T04:05:06.789Z', msg: 'job failed', err: { message: 'boom', stack: 'Error: boom\n    at x' } });
    assert.equal(prettyLine(line), '04:05:06.789 ERROR job failed\n    Error: boom\n        at x\n');
    assert.match(prettyLine(line, true), /^04:05:06\.789 \x1b\[31mERROR\x1b\[0m job failed/);
    assert.equal(prettyLine('not json\n'), 'not json\n');
  });
});
