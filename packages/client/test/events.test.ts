// The SDK's session event stream on hand-made input. parseEventStream (pure) on the wire's corner cases: a CRLF
// split across chunks, a lone CR ending a chunk (a line end, not held back until the next chunk), multi-line data,
// comments, id/event/retry fields. sessionEvents over a fake fetch whose streams the test writes: a connection
// silent beyond idleTimeoutMs is opened again with Last-Event-ID; an event whose data is not JSON is thrown
// (MalformedEventError), not reconnected; a stream the service ends cleanly is opened again after its retry: delay,
// with Last-Event-ID.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createClient, MalformedEventError, parseEventStream, type SseMessage } from '../src/index.ts';

async function* chunksOf(chunks: string[]): AsyncGenerator<string> {
  yield* chunks;
}

async function messagesOf(chunks: string[]): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for await (const message of parseEventStream(chunksOf(chunks))) messages.push(message);
  return messages;
}

const message = (data: string, more: Partial<SseMessage> = {}): SseMessage => ({ id: undefined, event: 'message', data, retry: undefined, ...more });

describe('parseEventStream', () => {
  test('a CRLF split across two chunks ends one line, not two (no empty line in between, so no early event)', async () => {
    assert.deepEqual(await messagesOf(['data: a\r', '\ndata: b\r\n\r', '\n']), [message('a\nb')]);
    assert.deepEqual(await messagesOf(['id: 7\r', '\n', 'data: x\r\n', '\r\n']), [message('x', { id: '7' })]);
  });

  test('a lone CR at the end of a chunk ends the line there: the event comes without waiting for the next chunk', async () => {
    assert.deepEqual(await messagesOf(['data: a\r', 'data: b\r\r']), [message('a\nb')]);
    assert.deepEqual(await messagesOf(['data: a\r\r', 'data: b\r', '\r']), [message('a'), message('b')]);
    // The service's next bytes may be a keep-alive 15 s later: the event must not wait for them.
    let release: () => void = () => {};
    const later = new Promise<void>((resolve) => {
      release = resolve;
    });
    async function* slow(): AsyncGenerator<string> {
      yield 'id: 1\rdata: {"n":1}\r\r';
      await later;
      yield ': keep-alive\r\r';
    }
    const messages = parseEventStream(slow());
    const first = await Promise.race([messages.next(), new Promise((resolve) => setTimeout(() => resolve('held back'), 500))]);
    release();
    assert.deepEqual(first, { done: false, value: message('{"n":1}', { id: '1' }) });
    assert.deepEqual(await messages.next(), { done: true, value: undefined });
  });

  test('multi-line data is joined with LF; one space after the colon is dropped, no more; a field without a colon is empty', async () => {
    assert.deepEqual(await messagesOf(['data: one\ndata:two\ndata:  three\ndata\n\n']), [message('one\ntwo\n three\n')]);
    assert.deepEqual(await messagesOf(['data: {"a":\n', 'data: 1}\n\n']), [message('{"a":\n1}')]);
  });

  test('comments and unknown fields are ignored; a block with no data is no event; an incomplete last event is dropped', async () => {
    assert.deepEqual(await messagesOf([': keep-alive\n\n', ':\n', 'data: x\n: between\nfoo: bar\n\n', ': again\n\n']), [message('x')]);
    assert.deepEqual(await messagesOf(['id: 3\nevent: ping\n\n']), []);
    assert.deepEqual(await messagesOf(['data: whole\n\ndata: cut off']), [message('whole')]);
  });

  test('id, event and retry: are read; a retry that is not digits only, or an id with NUL, is ignored', async () => {
    // retry: is the stream's reconnection delay from where it comes, even in a block of its own (no data).
    assert.deepEqual(await messagesOf(['retry: 300\n\n', 'data: a\n\n', 'data: b\nretry: 50\n\n', 'data: c\n\n']), [
      message('a', { retry: 300 }),
      message('b', { retry: 50 }),
      message('c', { retry: 50 }),
    ]);
    assert.deepEqual(await messagesOf(['id: 42\nevent: charging_session.active\nretry: 2500\ndata: {}\n\n']), [
      message('{}', { id: '42', event: 'charging_session.active', retry: 2500 }),
    ]);
    assert.deepEqual(await messagesOf(['retry: 2.5\nretry: -1\nretry: soon\nid: a\0b\ndata: {}\n\n']), [message('{}')]);
  });
});

// ----- sessionEvents over a fake fetch -----

/** What one connection's body does after its chunks: stay open and silent, or end. */
type After = 'silent' | 'end';

interface Opened {
  url: string;
  headers: Headers;
  at: number;
}

/** A fetch that answers each request with the next scripted event stream; records what was asked. */
function scriptedFetch(script: { chunks: string[]; after: After }[]) {
  const opened: Opened[] = [];
  const encoder = new TextEncoder();
  const fake: typeof fetch = async (input, init) => {
    opened.push({ url: String(input), headers: new Headers(init?.headers), at: performance.now() });
    const next = script[opened.length - 1];
    assert.ok(next, `connection ${opened.length} was not expected`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of next.chunks) controller.enqueue(encoder.encode(chunk));
        if (next.after === 'end') controller.close();
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  return { fake, opened };
}

const event = (n: number) => `id: ${n}\nevent: charging_session.progress\ndata: ${JSON.stringify({ id: `e${n}`, type: 'charging_session.progress' })}\n\n`;

function clientOn(fake: typeof fetch) {
  return createClient({ baseUrl: 'https://api.example.test', token: 'tok', fetch: fake, retry: { baseDelayMs: 10, maxDelayMs: 20 } });
}

describe('sessionEvents', () => {
  test('a connection silent for longer than idleTimeoutMs is opened again with Last-Event-ID, and goes on from there', async () => {
    const { fake, opened } = scriptedFetch([
      { chunks: [event(1)], after: 'silent' },
      { chunks: [event(2)], after: 'silent' },
    ]);
    const got: string[] = [];
    for await (const { id } of clientOn(fake).sessionEvents('u1', 's1', { idleTimeoutMs: 150 })) {
      got.push(id);
      if (got.length === 2) break;
    }
    assert.deepEqual(got, ['1', '2']);
    assert.equal(opened.length, 2);
    assert.equal(opened[0]?.url, 'https://api.example.test/api/v1/users/u1/charging-sessions/s1/events');
    assert.equal(opened[0]?.headers.get('last-event-id'), null);
    assert.equal(opened[1]?.headers.get('last-event-id'), '1');
    assert.equal(opened[1]?.headers.get('authorization'), 'Bearer tok');
    const gap = (opened[1]?.at as number) - (opened[0]?.at as number);
    assert.ok(gap >= 140, `reopened after the idle timeout, not before: ${gap} ms`);
  });

  test('an event whose data is not JSON is thrown as MalformedEventError, without reconnecting', async () => {
    const { fake, opened } = scriptedFetch([
      { chunks: [event(1), 'id: 2\nevent: charging_session.progress\ndata: {not json\n\n'], after: 'silent' },
      { chunks: [event(3)], after: 'silent' },
    ]);
    const got: string[] = [];
    const error = await (async () => {
      for await (const { id } of clientOn(fake).sessionEvents('u1', 's1', { idleTimeoutMs: 5_000 })) got.push(id);
    })().catch((e: unknown) => e);
    assert.ok(error instanceof MalformedEventError, String(error));
    assert.match(error.message, /event 2 \(charging_session\.progress\) has data that is not JSON/);
    assert.deepEqual(got, ['1']);
    assert.equal(opened.length, 1);
  });

  test('a stream the service ends is opened again after its retry: delay, with Last-Event-ID; each event once', async () => {
    const { fake, opened } = scriptedFetch([
      { chunks: ['retry: 300\n\n', event(1), event(2)], after: 'end' },
      { chunks: [event(3)], after: 'silent' },
    ]);
    const got: string[] = [];
    for await (const { id, event: e } of clientOn(fake).sessionEvents('u1', 's1', { lastEventId: '0' })) {
      assert.equal(e.type, 'charging_session.progress');
      got.push(id);
      if (got.length === 3) break;
    }
    assert.deepEqual(got, ['1', '2', '3']);
    assert.equal(opened.length, 2);
    assert.equal(opened[0]?.headers.get('last-event-id'), '0');
    assert.equal(opened[1]?.headers.get('last-event-id'), '2');
    const gap = (opened[1]?.at as number) - (opened[0]?.at as number);
    assert.ok(gap >= 290, `waited the server's retry: ${gap} ms`);
  });
});
