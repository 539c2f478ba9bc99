// An HTTP/1.1 exchange over a bare socket, for requests no client library would send (a head alone, a
// declared length the body never reaches, HTTP/1.0): the text is written as given and the JSON answer read.
import { connect } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** The answer in `received`, once its head and Content-Length bytes of body are in (or `closed`); else null. */
function answerIn(received: Buffer, closed: boolean): RawResponse | null {
  const text = received.toString("utf8");
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
  const body = text.slice(end + 4);
  const length = headers["content-length"] === undefined ? null : Number(headers["content-length"]);
  if (!closed && (length === null || Buffer.byteLength(body) < length)) return null;
  return { status: Number(statusLine.split(" ")[1]), headers, body: JSON.parse(body) };
}

export function rawExchange(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const answer = answerIn(received, false);
      if (!answer) return;
      socket.destroy();
      resolve(answer);
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const answer = answerIn(received, true);
      if (answer) resolve(answer);
      else reject(new Error(`connection closed: ${received.toString("utf8")}`));
    });
    socket.write(request);
  });
}
