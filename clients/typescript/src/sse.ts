/** Server-Sent Events from a byte stream: `event:` and `data:` fields, dispatched at each blank line. */

import type { StreamEvent } from "./types.js";

/** Feed lines (without their newline); `feed` returns the event a blank line completes, if any. */
export class SseParser {
  private event = "message";
  private data: string[] = [];

  feed(line: string): StreamEvent | undefined {
    if (line === "") {
      if (this.data.length === 0) {
        this.event = "message";
        return undefined;
      }
      const done = { event: this.event, data: JSON.parse(this.data.join("\n")) } as StreamEvent;
      this.event = "message";
      this.data = [];
      return done;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "event") this.event = value;
    else if (name === "data") this.data.push(value);
    return undefined;
  }
}

/** The events of a `text/event-stream` body, in order. */
export async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
        if (!done && end === buffer.length - 1 && buffer[end] === "\r") break; // a "\n" may follow
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        const event = parser.feed(line);
        if (event !== undefined) yield event;
      }
      if (done) {
        const last = buffer === "" ? undefined : parser.feed(buffer);
        if (last !== undefined) yield last;
        const tail = parser.feed("");
        if (tail !== undefined) yield tail;
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
